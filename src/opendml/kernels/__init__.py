"""NumPy kernels: one small function per operator, ``kernel(desc, inputs, outputs) -> None``.

Kernels assume a validated descriptor and bound arrays of exactly the descriptor's dtypes and sizes (possibly
strided views into caller buffers). They write every element of each output and nothing else, and never write
an input (inputs arrive read-only). A compiled fast path can replace a kernel behind the same signature.
"""
