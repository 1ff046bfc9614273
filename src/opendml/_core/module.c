/* opendml._core._native: the Python entry points of the compiled kernels (built for the baseline ISA).
 *
 * Every entry validates what it is handed before a pointer reaches a kernel: NumPy arrays, of the dtypes and
 * shapes the operator takes, at most 8 dimensions, no negative strides, writable outputs. Bounds were proven by
 * binding.py (NumPy's own checked view constructor); kernels touch only data + shape x strides. The GIL is
 * released while a kernel runs. The ISA variant is picked at import by CPU (and OS) support, highest first. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <numpy/arrayobject.h>
#include <math.h>
#include <unistd.h>

#include "engine.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define ODML_X86 1
#endif

static const odml_isa *isas[3];
static int nisas; /* the variants this CPU runs, lowest first */
static const odml_isa *active;
static int nthreads = 1;
/* Below this a kernel runs on the calling thread only: measured on the (loaded) 2-core machine, a second thread
 * never paid below 4 MiB (waking it costs about 5 us; at 4 MiB one and two threads tie). */
static Py_ssize_t parallel_min_bytes = 4 << 20;
/* Releasing and retaking the GIL costs about as much as a kernel on a few KiB: small calls keep it. */
#define RELEASE_GIL_BYTES (64 << 10)

/* ---------------------------------------------------------------- CPU detection */
#ifdef ODML_X86
static unsigned long long xcr0(void) {
    unsigned int eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
}

/* The CPU has the instructions and the OS saves their registers (XCR0: YMM for AVX, ZMM/opmask for AVX-512). */
static int os_saves(unsigned long long mask) {
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE)) return 0;
    return (xcr0() & mask) == mask;
}
#endif

static void detect(void) {
    nisas = 0;
    isas[nisas++] = &odml_isa_baseline;
#if defined(ODML_X86) && defined(ODML_HAVE_AVX2)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && os_saves(0x6)) {
        unsigned int a, b, c, d; /* F16C: CPUID.1:ECX bit 29 */
        if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C)) isas[nisas++] = &odml_isa_avx2;
#ifdef ODML_HAVE_AVX512
        if (nisas == 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && os_saves(0xe6))
            isas[nisas++] = &odml_isa_avx512;
#endif
    }
#endif
    active = isas[nisas - 1];
}

/* ---------------------------------------------------------------- argument checks */
static int dtype_of(PyArrayObject *a) {
    PyArray_Descr *d = PyArray_DESCR(a);
    if (PyArray_ISBYTESWAPPED(a)) return -1;
    switch (d->type_num) {
    case NPY_FLOAT32: return ODML_F32;
    case NPY_FLOAT16: return ODML_F16;
    case NPY_FLOAT64: return ODML_F64;
    case NPY_INT8: return ODML_I8;
    case NPY_INT16: return ODML_I16;
    case NPY_UINT8: return ODML_U8;
    case NPY_UINT16: return ODML_U16;
    }
    npy_intp size = PyArray_ITEMSIZE(a); /* int/long/longlong: 4 or 8 bytes by platform */
    if (PyArray_ISSIGNED(a)) return size == 4 ? ODML_I32 : size == 8 ? ODML_I64 : -1;
    if (PyArray_ISUNSIGNED(a)) return size == 4 ? ODML_U32 : size == 8 ? ODML_U64 : -1;
    return -1;
}

/* Fill `a` from a NumPy array; -1 with a Python exception when it is not one the kernels take. */
static int as_array(PyObject *obj, odml_array *a, int writable, const char *what) {
    if (!PyArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a numpy.ndarray, not %.100s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyArrayObject *arr = (PyArrayObject *)obj;
    a->ndim = PyArray_NDIM(arr);
    a->dtype = dtype_of(arr);
    a->itemsize = (int)PyArray_ITEMSIZE(arr);
    if (a->dtype < 0 || a->ndim > ODML_MAXDIM || (writable && !PyArray_ISWRITEABLE(arr))) {
        PyErr_Format(PyExc_TypeError, "%s: a native-endian numeric array of at most %d dimensions%s is required",
                     what, ODML_MAXDIM, writable ? ", writable," : "");
        return -1;
    }
    a->data = PyArray_BYTES(arr);
    for (int d = 0; d < a->ndim; d++) {
        a->shape[d] = PyArray_DIM(arr, d);
        a->strides[d] = PyArray_STRIDE(arr, d);
        if (a->strides[d] < 0 && a->shape[d] > 1) {
            PyErr_Format(PyExc_ValueError, "%s: negative strides are not supported", what);
            return -1;
        }
        if (a->shape[d] <= 1) a->strides[d] = 0;
        if (a->shape[d] == 0) {
            PyErr_Format(PyExc_ValueError, "%s: empty arrays are not supported", what);
            return -1;
        }
    }
    return 0;
}

static int same_shape(const odml_array *a, const odml_array *b) {
    if (a->ndim != b->ndim) return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return 1;
}

static Py_ssize_t nbytes(const odml_array *a) {
    Py_ssize_t n = a->itemsize;
    for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
    return n;
}

/* The byte range [lo, hi) the array's elements span (strides are non-negative). */
static void extent(const odml_array *a, char **lo, char **hi) {
    ptrdiff_t last = 0;
    for (int d = 0; d < a->ndim; d++) last += (a->shape[d] - 1) * a->strides[d];
    *lo = a->data;
    *hi = a->data + last + a->itemsize;
}

/* An input that shares memory with the output other than element for element (in place through other
 * strides) is read from a packed copy, as NumPy does: the kernels may write an element before reading another.
 * Returns a new reference to hold while the kernel runs (or Py_None), NULL on error. */
static PyObject *unalias(PyObject *inobj, odml_array *in, const odml_array *out) {
    char *a, *b, *c, *d;
    extent(in, &a, &b);
    extent(out, &c, &d);
    int same = in->data == out->data && in->itemsize == out->itemsize;
    for (int k = 0; same && k < in->ndim; k++) same = in->strides[k] == out->strides[k];
    if (same || b <= c || d <= a) return Py_NewRef(Py_None);
    PyObject *copy = PyArray_NewCopy((PyArrayObject *)inobj, NPY_CORDER);
    if (copy && as_array(copy, in, 0, "input")) Py_CLEAR(copy);
    return copy;
}

static int threads_for(Py_ssize_t bytes) { return bytes >= parallel_min_bytes ? nthreads : 1; }

/* A double rounded to float32 as NumPy does (beyond float32's range: infinity, not undefined behaviour). */
static float to_float(double x) {
    if (fabs(x) >= 0x1.ffffffp127) return x > 0 ? INFINITY : -INFINITY;
    return (float)x;
}

#define FAIL(...) return PyErr_Format(PyExc_ValueError, __VA_ARGS__), NULL

/* ---------------------------------------------------------------- execute's quick binding test */
/* The tensors of a compiled operator as its quick path takes them (device.py): per tensor, inputs first, the
 * dtype, sizes and byte strides the bound array must have exactly. */
#define SPEC_MAX 8
typedef struct {
    int n, nout;
    struct {
        int type_num, itemsize, ndim;
        npy_intp shape[ODML_MAXDIM], strides[ODML_MAXDIM];
    } t[SPEC_MAX];
} bind_spec;

static void spec_free(PyObject *capsule) { PyMem_Free(PyCapsule_GetPointer(capsule, "opendml.bind_spec")); }

/* binding_spec(tensors, nout): tensors a tuple of (dtype, shape, strides), the outputs last. */
static PyObject *py_binding_spec(PyObject *self, PyObject *args) {
    PyObject *tensors;
    int nout;
    if (!PyArg_ParseTuple(args, "O!i", &PyTuple_Type, &tensors, &nout)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(tensors);
    if (n > SPEC_MAX || nout < 1 || nout > n) FAIL("binding_spec: 1 to %d tensors, at least one output", SPEC_MAX);
    bind_spec *spec = PyMem_Calloc(1, sizeof *spec);
    if (!spec) return PyErr_NoMemory();
    spec->n = (int)n, spec->nout = nout;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *dt, *shape, *strides;
        PyArray_Descr *descr = NULL;
        PyObject *item = PyTuple_GET_ITEM(tensors, k);
        if (!PyTuple_Check(item)) {
            PyMem_Free(spec);
            return PyErr_Format(PyExc_TypeError, "binding_spec: each tensor is a tuple (dtype, shape, strides)");
        }
        if (!PyArg_ParseTuple(item, "OO!O!", &dt, &PyTuple_Type, &shape, &PyTuple_Type, &strides) ||
            !PyArray_DescrConverter(dt, &descr)) {
            PyMem_Free(spec);
            return NULL;
        }
        spec->t[k].type_num = descr->type_num;
        spec->t[k].itemsize = (int)PyDataType_ELSIZE(descr);
        Py_DECREF(descr);
        Py_ssize_t nd = PyTuple_GET_SIZE(shape);
        if (nd > ODML_MAXDIM || PyTuple_GET_SIZE(strides) != nd) {
            PyMem_Free(spec);
            FAIL("binding_spec: at most %d dimensions, a stride per size", ODML_MAXDIM);
        }
        spec->t[k].ndim = (int)nd;
        for (Py_ssize_t d = 0; d < nd; d++) {
            spec->t[k].shape[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
            spec->t[k].strides[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, d));
        }
        if (PyErr_Occurred()) {
            PyMem_Free(spec);
            return NULL;
        }
    }
    PyObject *capsule = PyCapsule_New(spec, "opendml.bind_spec", spec_free);
    if (!capsule) PyMem_Free(spec);
    return capsule;
}

/* The byte range [lo, hi) of an array whose strides are non-negative. */
static void array_extent(PyArrayObject *a, char **lo, char **hi) {
    npy_intp last = 0;
    for (int d = 0; d < PyArray_NDIM(a); d++) last += (PyArray_DIM(a, d) - 1) * PyArray_STRIDE(a, d);
    *lo = PyArray_BYTES(a);
    *hi = *lo + last + PyArray_ITEMSIZE(a);
}

/* exact(spec, inputs, outputs): True when the lists hold exactly the spec's arrays (exact ndarray type, dtype in
 * native byte order, sizes, strides; outputs writable) and no output's byte range meets another binding's. False
 * sends execute down its Python paths, which bind anything valid, explain anything invalid and run in place
 * where the operator allows. */
static PyObject *py_exact(PyObject *self, PyObject *args) {
    PyObject *capsule, *lists[2];
    if (!PyArg_ParseTuple(args, "OOO", &capsule, &lists[0], &lists[1])) return NULL;
    const bind_spec *spec = PyCapsule_GetPointer(capsule, "opendml.bind_spec");
    if (!spec) return NULL;
    PyArrayObject *arrays[SPEC_MAX];
    int k = 0;
    for (int which = 0; which < 2; which++) {
        PyObject *list = lists[which];
        Py_ssize_t want = which ? spec->nout : spec->n - spec->nout;
        if (!(PyList_CheckExact(list) || PyTuple_CheckExact(list)) || PySequence_Fast_GET_SIZE(list) != want)
            Py_RETURN_FALSE;
        for (Py_ssize_t i = 0; i < want; i++, k++) {
            PyObject *obj = PySequence_Fast_GET_ITEM(list, i);
            if (!PyArray_CheckExact(obj)) Py_RETURN_FALSE;
            PyArrayObject *a = (PyArrayObject *)obj;
            if (PyArray_DESCR(a)->type_num != spec->t[k].type_num || PyArray_ITEMSIZE(a) != spec->t[k].itemsize ||
                PyArray_ISBYTESWAPPED(a) || PyArray_NDIM(a) != spec->t[k].ndim || (which && !PyArray_ISWRITEABLE(a)))
                Py_RETURN_FALSE;
            for (int d = 0; d < spec->t[k].ndim; d++)
                if (PyArray_DIM(a, d) != spec->t[k].shape[d] || PyArray_STRIDE(a, d) != spec->t[k].strides[d])
                    Py_RETURN_FALSE;
            arrays[k] = a;
        }
    }
    for (int o = spec->n - spec->nout; o < spec->n; o++) {
        char *a, *b, *c, *d;
        array_extent(arrays[o], &a, &b);
        for (int j = 0; j < spec->n; j++) {
            if (j == o) continue;
            array_extent(arrays[j], &c, &d);
            if (a < d && c < b) Py_RETURN_FALSE;
        }
    }
    Py_RETURN_TRUE;
}

/* ---------------------------------------------------------------- entry points */
/* elementwise(op, inputs: tuple, output, f0=0.0, f1=0.0) */
static PyObject *py_elementwise(PyObject *self, PyObject *args) {
    int op;
    PyObject *ins, *outobj;
    double d0 = 0, d1 = 0;
    if (!PyArg_ParseTuple(args, "iO!O|dd", &op, &PyTuple_Type, &ins, &outobj, &d0, &d1)) return NULL;
    float f0 = to_float(d0), f1 = to_float(d1);
    odml_array in[3], out;
    Py_ssize_t nin = PyTuple_GET_SIZE(ins);
    if (nin < 1 || nin > 3) FAIL("elementwise: 1 to 3 inputs");
    if (as_array(outobj, &out, 1, "output")) return NULL;
    Py_ssize_t bytes = nbytes(&out);
    for (Py_ssize_t k = 0; k < nin; k++) {
        if (as_array(PyTuple_GET_ITEM(ins, k), &in[k], 0, "input")) return NULL;
        if (!same_shape(&in[k], &out)) FAIL("elementwise: input %zd and the output differ in shape", k);
        bytes += nbytes(&in[k]);
    }
    int ok = 0;
    switch (op) {
    case ODML_OP_HARD_SIGMOID:
        ok = nin == 1 && in[0].dtype == out.dtype && (out.dtype == ODML_F32 || out.dtype == ODML_F16);
        break;
    case ODML_OP_IF:
        ok = nin == 3 && in[0].dtype == ODML_U8 && in[1].dtype == out.dtype && in[2].dtype == out.dtype;
        break;
    /* issues 10 and 11 */
    case ODML_OP_ADD:
    case ODML_OP_SUBTRACT:
    case ODML_OP_MULTIPLY:
        ok = nin == 2 && in[0].dtype == out.dtype && in[1].dtype == out.dtype && out.dtype != ODML_F64;
        break;
    case ODML_OP_LESS_THAN:
        ok = nin == 2 && in[0].dtype == in[1].dtype && in[0].dtype != ODML_F64 && out.dtype == ODML_U8;
        break;
    case ODML_OP_CLIP:
    case ODML_OP_RELU:
    case ODML_OP_EXP:
    case ODML_OP_SIGMOID:
    case ODML_OP_TANH:
    case ODML_OP_GELU:
        ok = nin == 1 && in[0].dtype == out.dtype && (out.dtype == ODML_F32 || out.dtype == ODML_F16);
        break;
    case ODML_OP_QUANTIZE_LINEAR:
        ok = nin == 3 && (in[0].dtype == ODML_F32 || in[0].dtype == ODML_F16) &&
             (in[1].dtype == ODML_F32 || in[1].dtype == ODML_F16) && in[2].dtype == out.dtype &&
             (out.dtype == ODML_U8 || out.dtype == ODML_I8);
        break;
    }
    if (!ok) FAIL("elementwise: operator %d does not take these operands", op);
    odml_params prm = {.f = {f0, f1}, .nthreads = threads_for(bytes)};
    PyObject *keep[3] = {NULL, NULL, NULL};
    for (Py_ssize_t k = 0; k < nin; k++)
        if (!(keep[k] = unalias(PyTuple_GET_ITEM(ins, k), &in[k], &out))) break;
    int rc = -2;
    if (keep[nin - 1]) {
        if (bytes < RELEASE_GIL_BYTES) {
            rc = active->elementwise(op, (int)nin, in, &out, &prm);
        } else {
            Py_BEGIN_ALLOW_THREADS rc = active->elementwise(op, (int)nin, in, &out, &prm);
            Py_END_ALLOW_THREADS
        }
    }
    for (Py_ssize_t k = 0; k < nin; k++) Py_XDECREF(keep[k]);
    if (rc == -2) return NULL;
    if (rc) FAIL("elementwise: no kernel for operator %d", op);
    Py_RETURN_NONE;
}

/* reduce(op, input, output, axes_mask, flags) */
static PyObject *py_reduce(PyObject *self, PyObject *args) {
    int op, flags;
    unsigned int axes;
    PyObject *inobj, *outobj;
    if (!PyArg_ParseTuple(args, "iOOIi", &op, &inobj, &outobj, &axes, &flags)) return NULL;
    odml_array in, out;
    if (as_array(inobj, &in, 0, "input") || as_array(outobj, &out, 1, "output")) return NULL;
    if (in.ndim != out.ndim || !axes || axes >> in.ndim) FAIL("reduce: axes or ranks do not match");
    uint64_t group = 1;
    for (int d = 0; d < in.ndim; d++) {
        int reduced = axes >> d & 1;
        ptrdiff_t want = reduced && !ODML_FULL_OUTPUT(op) ? 1 : in.shape[d];
        if (out.shape[d] != want) FAIL("reduce: the output's shape does not match the input's");
        if (reduced) group *= (uint64_t)in.shape[d];
    }
    if (group > UINT32_MAX) FAIL("reduce: more than 2^32-1 elements per group");
    int ok = 0, f = in.dtype == ODML_F32 || in.dtype == ODML_F16;
    switch (op) {
    case ODML_OP_ARGMAX:
        ok = in.dtype != ODML_F64 && (out.dtype == ODML_I32 || out.dtype == ODML_I64 || out.dtype == ODML_U32 ||
                                      out.dtype == ODML_U64);
        break;
    case ODML_OP_HARDMAX:
    case ODML_OP_LOG_SOFTMAX:
    case ODML_OP_SOFTMAX:
    case ODML_OP_AVERAGE:
    case ODML_OP_L2:
    case ODML_OP_LOG_SUM:
        ok = f && out.dtype == in.dtype;
        break;
    case ODML_OP_SUM: /* REDUCE's functions: the output has the input's type */
    case ODML_OP_SUM_SQUARE:
    case ODML_OP_L1:
    case ODML_OP_MAX:
        ok = in.dtype != ODML_F64 && out.dtype == in.dtype;
        break;
    }
    if (!ok) FAIL("reduce: operator %d does not take these operands", op);
    odml_params prm = {.axes = axes, .flags = flags, .nthreads = threads_for(nbytes(&in) + nbytes(&out))};
    PyObject *keep = unalias(inobj, &in, &out);
    if (!keep) return NULL;
    int rc;
    if (nbytes(&in) + nbytes(&out) < RELEASE_GIL_BYTES) {
        rc = active->reduce(op, &in, &out, &prm);
    } else {
        Py_BEGIN_ALLOW_THREADS rc = active->reduce(op, &in, &out, &prm);
        Py_END_ALLOW_THREADS
    }
    Py_DECREF(keep);
    if (rc) FAIL("reduce: no kernel for operator %d", op);
    Py_RETURN_NONE;
}

static PyObject *py_isas(PyObject *self, PyObject *unused) {
    PyObject *list = PyList_New(nisas);
    for (int i = 0; list && i < nisas; i++) PyList_SET_ITEM(list, i, PyUnicode_FromString(isas[i]->name));
    return list;
}

static PyObject *py_get_isa(PyObject *self, PyObject *unused) { return PyUnicode_FromString(active->name); }

static PyObject *py_set_isa(PyObject *self, PyObject *arg) {
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    for (int i = 0; i < nisas; i++)
        if (!strcmp(isas[i]->name, name)) {
            active = isas[i];
            Py_RETURN_NONE;
        }
    FAIL("ISA %s is not available on this machine", name);
}

static PyObject *py_set_threads(PyObject *self, PyObject *args) {
    int n;
    Py_ssize_t min_bytes = parallel_min_bytes;
    if (!PyArg_ParseTuple(args, "i|n", &n, &min_bytes)) return NULL;
    if (n < 1 || n > 256 || min_bytes < 0) FAIL("threads: 1 to 256, and a non-negative size threshold");
    nthreads = n;
    parallel_min_bytes = min_bytes;
    Py_RETURN_NONE;
}

static PyObject *py_get_threads(PyObject *self, PyObject *unused) {
    return Py_BuildValue("(in)", nthreads, parallel_min_bytes);
}

static PyMethodDef methods[] = {
    {"elementwise", py_elementwise, METH_VARARGS, "elementwise(op, inputs, output, f0=0, f1=0)"},
    {"reduce", py_reduce, METH_VARARGS, "reduce(op, input, output, axes_mask, flags)"},
    {"binding_spec", py_binding_spec, METH_VARARGS, "binding_spec(tensors, nout): a spec for exact()"},
    {"exact", py_exact, METH_VARARGS, "exact(spec, inputs, outputs): the arrays are the spec's, outputs apart"},
    {"isas", py_isas, METH_NOARGS, "the ISA variants this machine runs, lowest first"},
    {"get_isa", py_get_isa, METH_NOARGS, "the ISA variant in use"},
    {"set_isa", py_set_isa, METH_O, "use another available ISA variant"},
    {"set_threads", py_set_threads, METH_VARARGS, "set_threads(n, parallel_min_bytes=current)"},
    {"get_threads", py_get_threads, METH_NOARGS, "(threads, parallel_min_bytes)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void) {
    import_array();
    detect();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    nthreads = cpus > 0 ? (cpus > 256 ? 256 : (int)cpus) : 1;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
#define ADD_OP(name) PyModule_AddIntConstant(m, "OP_" #name, ODML_OP_##name);
    ODML_ELEMENTWISE_OPS(ADD_OP) ODML_REDUCE_OPS(ADD_OP)
    PyModule_AddIntConstant(m, "LAST", ODML_LAST);
    PyModule_AddIntConstant(m, "MIN", ODML_MIN);
    return m;
}
