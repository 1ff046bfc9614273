/* The operators of each engine. Adding an operator (see kernels.c's header for the inner function):
 *   1. add X(NAME) to its engine's list below;
 *   2. write its inner function in kernels.c and add one line to that engine's table there;
 *   3. register a Python kernel in opendml/kernels/compiled/ that calls _native.elementwise/_native.reduce
 *      with OP_NAME (module.c exports every name below as OP_<NAME>) and lists the dtypes it takes. */
#ifndef ODML_OPS_H
#define ODML_OPS_H

#define ODML_ELEMENTWISE_OPS(X) X(HARD_SIGMOID) X(IF) ODML_ELEMENTWISE_OPS_EW(X)
/* issues 10 and 11 */
#define ODML_ELEMENTWISE_OPS_EW(X) X(ADD) X(SUBTRACT) X(MULTIPLY) X(LESS_THAN) X(CLIP) X(RELU) X(EXP) X(SIGMOID) \
    X(TANH) X(GELU) X(QUANTIZE_LINEAR)
#define ODML_REDUCE_OPS(X) X(ARGMAX) X(HARDMAX) X(LOG_SOFTMAX) ODML_REDUCE_OPS_RED(X)
/* REDUCE's functions and SOFTMAX (MIN is MAX with ODML_MIN, as ARGMIN is ARGMAX with it; L2 and LOG_SUM take
 * floats only). */
#define ODML_REDUCE_OPS_RED(X) X(SOFTMAX) X(SUM) X(SUM_SQUARE) X(L1) X(AVERAGE) X(MAX) X(L2) X(LOG_SUM)

#endif
