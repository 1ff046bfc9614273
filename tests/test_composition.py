"""The IF page's remark, LeakyRelu(x) = If(Less(x, 0), Mul(x, alpha), x), built from three opendml operators,
computes what ACTIVATION_LEAKY_RELU computes (bit for bit, -0.0 and infinities included)."""

from __future__ import annotations

import numpy as np
import pytest

from opendml import functional as F


@pytest.mark.parametrize("dtype, alpha", [(np.float32, 0.1), (np.float32, 3.0), (np.float16, 0.125)])
def test_if_page_leaky_relu_composition_equals_the_activation(dtype, alpha):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((3, 4, 5)) * 4).astype(dtype)
    x.flat[:5] = [0.0, -0.0, np.inf, -np.inf, np.finfo(dtype).min]
    negative = F.element_wise_logical_less_than(x, np.zeros_like(x))
    scaled = F.element_wise_multiply(x, np.full_like(x, alpha))  # alpha is exact in float16 too (0.125)
    composed = F.element_wise_if(negative, scaled, x)
    direct = F.activation_leaky_relu(x, alpha=alpha)
    bits = f"u{x.itemsize}"
    assert composed.dtype == direct.dtype == dtype
    np.testing.assert_array_equal(composed.view(bits), direct.view(bits))
