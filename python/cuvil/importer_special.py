"""Elementwise special functions torch-mlir has no lowering of (Bessel J / Y,
modified Bessel I / K, erfinv, ndtri, Airy Ai), written as ops it lowers:
a table for torch.export's run_decompositions, next to
cuvil.importer_decompositions' one.

The algorithms and coefficients are those of eager's CPU kernels
(ATen/native/Math.h, from the Cephes Math Library; see its note [3-Clause
BSD License for the Cephes Math Library]), so that results agree with
eager's where the functions are ill-conditioned too. Each branch of a
kernel is computed on every element, on an argument clamped into its own
range (no NaN or inf from a branch that is not taken), and torch.where
picks; special values (0, the domain's edges, +-inf, NaN) are set as eager
gives them. As in importer_decompositions, the input is first rounded to
the result dtype (eager's kernels see the rounded value, an int64 input
included), evaluated in float64 and rounded once. Eager has these kernels
for float32 and float64 only (erfinv for half too): a float16 or bfloat16
input, like the float64 and complex inputs importer_decompositions leaves,
gets NotImplemented (the op stays unsupported).
"""
import functools
import math

import torch

from .importer_decompositions import while_loop_op
from .importer_decompositions import _bessel_i, _float_result, _polynomial, digamma

aten = torch.ops.aten

_NO_HALF_KERNEL = (torch.float16, torch.bfloat16)
_SQRT_2_OVER_PI = 0.797884560802865355879892119868763737
_TWO_OVER_PI = 0.636619772367581343075535053490057448


def _result_dtype(x, half: bool = False):
    """The result dtype eager gives, or None where this module does not cover
    it (`half`: eager has a float16 / bfloat16 kernel of the op)."""
    dtype = _float_result(x)
    if dtype is None or (dtype in _NO_HALF_KERNEL and not half):
        return None
    return dtype


def _in_float64(half: bool = False):
    """A decomposition from f(z, dtype): the input rounded to the result
    dtype (eager's kernels see the rounded value) and widened to float64,
    f's float64 values rounded once to the result dtype; NotImplemented
    where _result_dtype has none."""
    def wrap(f):
        @functools.wraps(f)
        def decomposition(x):
            dtype = _result_dtype(x, half)
            if dtype is None:
                return NotImplemented
            return f(x.to(dtype).double(), dtype).to(dtype)
        return decomposition
    return wrap


def _polevl(t, coefficients):
    """Cephes' polevl: coefficients from the highest power down."""
    return _polynomial(t, tuple(reversed(coefficients)))


def _chbevl(t, coefficients):
    """Cephes' chbevl: the Chebyshev series sum' c_i T_i(t / 2), coefficients
    from the highest order down, by Clenshaw's recurrence (a fixed number of
    steps: one per coefficient)."""
    b0, b1, b2 = torch.full_like(t, coefficients[0]), torch.zeros_like(t), torch.zeros_like(t)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = t * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _full(like, value):
    return torch.full_like(like, value)


def _with_nan(z, out):
    """NaN where the input is NaN (whatever the branches made of it)."""
    return torch.where(z != z, z, out)


def _rounded_phase(a, dtype, shift):
    """a - shift as eager's kernel computes it, in the result dtype. Past
    |x| ~ 1e5 the float32 phase of the oscillating asymptotic forms is off
    by more than the tolerance, and eager's values are those of that rounded
    phase: rounding it the same way keeps the results eager's."""
    return (a.to(dtype) - shift).double()


# --------------------------------------------------------------------------
# Bessel functions of the first and second kind, orders 0 and 1: a rational
# function on |x| <= 5 (and log(x) J(x) for Y), Hankel's asymptotic form
# P(25/x^2) cos(phase) - Q(25/x^2) sin(phase) above (Cephes j0, j1, y0, y1).
# --------------------------------------------------------------------------
_J0_PP = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
          5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
          9.99999999999999997821e-01)
_J0_PQ = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
          5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
          1.00000000000000000218e+00)
_J0_QP = (-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
          -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
          -5.14105326766599330220e+01, -6.05014350600728481186e+00)
_J0_QQ = (6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
          7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
          2.42005740240291393179e+02)
_J0_RP = (-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
          9.70862251047306323952e+15)
_J0_RQ = (4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
          1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
          3.18121955943204943306e+16, 1.71086294081043136091e+18)
_Y0_YP = (1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
          -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
          4.42733268572569800351e+16, -1.84950800436986690637e+16)
_Y0_YQ = (1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
          8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
          2.50596256172653059228e+17)

_J1_PP = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
          5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
          1.00000000000000000254e+00)
_J1_PQ = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
          5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
          9.99999999999999997461e-01)
_J1_QP = (5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
          3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
          2.11688757100572135698e+02, 2.52070205858023719784e+01)
_J1_QQ = (7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
          9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
          3.36093607810698293419e+02)
_J1_RP = (-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
          3.68295732863852883286e+15)
_J1_RQ = (6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
          2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
          8.95222336184627338078e+16, 5.32278620332680085395e+18)
_Y1_YP = (1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
          -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17)
_Y1_YQ = (5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
          1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
          6.87141087355300489866e+16, 3.97270608116560655612e+18)

# (P numerator, P denominator, Q numerator, Q denominator, phase shift)
_HANKEL = {0: (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ, math.pi / 4),
           1: (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ, 3 * math.pi / 4)}


def _hankel(a, dtype, order: int):
    """(J, Y) of `order` at a >= 5 (float64): the asymptotic forms
    sqrt(2 / (pi a)) (P cos(phase) - 5/a Q sin(phase)) and
    sqrt(2 / (pi a)) (P sin(phase) + 5/a Q cos(phase))."""
    pp, pq, qp, qq, shift = _HANKEL[order]
    w = 25.0 / (a * a)
    p = _polevl(w, pp) / _polevl(w, pq)
    q = 5.0 / a * (_polevl(w, qp) / _polevl(w, qq))
    phase = _rounded_phase(a, dtype, shift)
    cos, sin = torch.cos(phase), torch.sin(phase)
    scale = _SQRT_2_OVER_PI / torch.sqrt(a)
    return (p * cos - q * sin) * scale, (p * sin + q * cos) * scale


def _j0_small(s):
    """J0 on |s| <= 5: (s^2 - r1^2)(s^2 - r2^2) RP(s^2) / RQ(s^2), r1, r2 its
    first two zeros."""
    s2 = s * s
    return (s2 - 5.78318596294678452118e+00) * (s2 - 3.04712623436620863991e+01) \
        * _polevl(s2, _J0_RP) / _polevl(s2, _J0_RQ)


def _j1_small(s):
    """J1 on |s| <= 5 (odd in s): s (s^2 - r1^2)(s^2 - r2^2) RP(s^2) / RQ(s^2)."""
    s2 = s * s
    return _polevl(s2, _J1_RP) / _polevl(s2, _J1_RQ) * s \
        * (s2 - 1.46819706421238932572e+01) * (s2 - 4.92184563216946036703e+01)


def _asymptotic_argument(a, floor):
    """max(a, floor): the large-argument branch's argument (inf and NaN pass)."""
    return torch.maximum(a, _full(a, floor))


@_in_float64()
def bessel_j0(z, dtype):
    """aten.special_bessel_j0 (even): NaN at +-inf, as eager."""
    a = z.abs()
    small = _j0_small(torch.clamp(a, max=5.0))
    large, _ = _hankel(_asymptotic_argument(a, 5.0), dtype, 0)
    return _with_nan(z, torch.where(a <= 5.0, small, large))


@_in_float64()
def bessel_j1(z, dtype):
    """aten.special_bessel_j1 (odd): J1(-x) = -J1(x); NaN at +-inf, as eager."""
    a = z.abs()
    small = _j1_small(torch.clamp(z, -5.0, 5.0))
    large, _ = _hankel(_asymptotic_argument(a, 5.0), dtype, 1)
    large = torch.where(z < 0, -large, large)
    return _with_nan(z, torch.where(a <= 5.0, small, large))


def _positive_small(z, top):
    """z on (0, top], 1 elsewhere: the small-argument branch's argument of a
    function with a log(z) term."""
    return torch.where((z > 0) & (z <= top), z, torch.ones_like(z))


def _y_edges(z, out, at_zero):
    """Eager's Y / K values off (0, inf): `at_zero` at +-0, NaN below 0
    (-inf included) and at NaN."""
    out = torch.where(z < 0, _full(z, math.nan), out)
    return _with_nan(z, torch.where(z == 0, _full(z, at_zero), out))


@_in_float64()
def bessel_y0(z, dtype):
    """aten.special_bessel_y0: -inf at 0, NaN for x < 0; on (0, 5]
    YP(x^2) / YQ(x^2) + 2/pi log(x) J0(x)."""
    s = _positive_small(z, 5.0)
    small = _polevl(s * s, _Y0_YP) / _polevl(s * s, _Y0_YQ) + _TWO_OVER_PI * torch.log(s) * _j0_small(s)
    _, large = _hankel(_asymptotic_argument(z, 5.0), dtype, 0)
    return _y_edges(z, torch.where(z <= 5.0, small, large), -math.inf)


@_in_float64()
def bessel_y1(z, dtype):
    """aten.special_bessel_y1: -inf at 0, NaN for x < 0; on (0, 5]
    x YP(x^2) / YQ(x^2) + 2/pi (J1(x) log(x) - 1/x)."""
    s = _positive_small(z, 5.0)
    small = s * (_polevl(s * s, _Y1_YP) / _polevl(s * s, _Y1_YQ)) \
        + _TWO_OVER_PI * (_j1_small(s) * torch.log(s) - 1.0 / s)
    _, large = _hankel(_asymptotic_argument(z, 5.0), dtype, 1)
    return _y_edges(z, torch.where(z <= 5.0, small, large), -math.inf)


# --------------------------------------------------------------------------
# Modified Bessel functions. I0 / I1 are those of aten.i0 / special_i1
# (importer_decompositions._bessel_i). K0 / K1 (Cephes k0, k1, k0e, k1e): a
# Chebyshev series in x^2 - 2 minus log(x/2) I(x) on (0, 2], a Chebyshev
# series in 8/x - 2 times exp(-x) / sqrt(x) above.
# --------------------------------------------------------------------------
_K0_A = (1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
         1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
         1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
         -5.35327393233902768720e-01)
_K0_B = (5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
         -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
         6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
         -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
         1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
         -1.69753450938905987466e-09, 8.57403401741422608519e-09, -4.66048989768794782956e-08,
         2.76681363944501510342e-07, -1.83175552271911948767e-06, 1.39498137188764993662e-05,
         -1.28495495816278026384e-04, 1.56988388573005337491e-03, -3.14481013119645005427e-02,
         2.44030308206595545468e+00)
_K1_A = (-7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
         -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
         -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
         -3.53155960776544875667e-01, 1.52530022733894777053e+00)
_K1_B = (-5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
         1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
         -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
         3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
         -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
         2.01504975519703286596e-09, -1.03457624656780970260e-08, 5.74108412545004946722e-08,
         -3.50196060308781257119e-07, 2.40648494783721712015e-06, -1.93619797416608296024e-05,
         1.95215518471351631108e-04, -2.85781685962277938680e-03, 1.03923736576817238437e-01,
         2.72062619048444266945e+00)


def _bessel_k(z, order: int, scaled: bool):
    """K0 / K1 (times exp(x) when `scaled`) of float64 z: inf at 0, NaN for
    z < 0 (-inf included), 0 at inf."""
    s = _positive_small(z, 2.0)
    if order == 0:
        small = _chbevl(s * s - 2.0, _K0_A) - torch.log(0.5 * s) * _bessel_i(s, 0, scaled=False)
    else:
        small = torch.log(0.5 * s) * _bessel_i(s, 1, scaled=False) + _chbevl(s * s - 2.0, _K1_A) / s
    if scaled:
        small = small * torch.exp(s)
    b = _asymptotic_argument(z, 2.0)
    large = _chbevl(8.0 / b - 2.0, _K0_B if order == 0 else _K1_B) / torch.sqrt(b)
    if not scaled:
        large = large * torch.exp(-b)
    return _y_edges(z, torch.where(z <= 2.0, small, large), math.inf)


def _bessel_i_as_eager(z, dtype, order: int):
    """I0 / I1 of float64 z, +-inf where exp(|z|) overflows the result dtype
    (|z| > 88.72 in float32): eager's kernel multiplies by exp(|x|) in that
    dtype, so gives inf from there, where I(x) itself fits up to |x| ~ 91.6."""
    out = _bessel_i(z, order, scaled=False)
    overflow = _full(z, math.inf)
    if order == 1:
        overflow = torch.where(z < 0, -overflow, overflow)
    a = z.abs()   # +-inf stays NaN (inf / inf in eager's kernel)
    return torch.where((a > math.log(torch.finfo(dtype).max)) & (a != math.inf), overflow, out)


def _modified_bessel(kind: str, order: int, scaled: bool):
    @_in_float64()
    def decomposition(z, dtype):
        return _bessel_i_as_eager(z, dtype, order) if kind == "i" else _bessel_k(z, order, scaled)
    name = f"{'scaled_' if scaled else ''}modified_bessel_{kind}{order}"
    decomposition.__name__ = name
    decomposition.__doc__ = f"aten.special_{name}: torch-mlir has no lowering of it."
    return decomposition


# --------------------------------------------------------------------------
# Inverse normal CDF and inverse error function (Cephes ndtri). erfinv(y) is
# ndtri((1 + y) / 2) / sqrt(2), with p - 1/2 = y / 2 and min(p, 1 - p) =
# (1 - |y|) / 2 taken from y directly: both exact, where (1 + y) / 2 would
# lose a tiny y (erfinv(1e-30) = 8.9e-31) and the last bits near +-1.
# Eager's own erfinv (a rational guess and two Newton steps on erf) agrees
# to a few float32 ulps.
# --------------------------------------------------------------------------
_EXP_MINUS_2 = 0.13533528323661269189
_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.00000000000000000000E0, 1.95448858338141759834E0, 4.67627912898881538453E0,
             8.63602421390890590575E1, -2.25462687854119370527E2, 2.00260212380060660359E2,
             -8.20372256168333339912E1, 1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.00000000000000000000E0, 1.57799883256466749731E1, 4.53907635128879210584E1,
             4.13172038254672030440E1, 1.50425385692907503408E1, 2.50464946208309415979E0,
             -1.42182922854787788574E-1, -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.00000000000000000000E0, 6.02427039364742014255E0, 3.67983563856160859403E0,
             1.37702099489081330271E0, 2.16236993594496635890E-1, 1.34204006088543189037E-2,
             3.28014464682127739104E-4, 2.89247864745380683936E-6, 6.79019408009981274425E-9)


def _ndtri(centered, tail, lower):
    """ndtri(p) from centered = p - 1/2, tail = min(p, 1 - p) and lower =
    p < 1/2, for p in (0, 1) (float64): a rational function of centered^2
    where tail > exp(-2), else of 1 / sqrt(-2 log(tail))."""
    c = torch.clamp(centered, -0.5, 0.5)
    c2 = c * c
    central = (c + c * (c2 * _polevl(c2, _NDTRI_P0) / _polevl(c2, _NDTRI_Q0))) * math.sqrt(2 * math.pi)
    t = torch.where((tail > 0) & (tail <= _EXP_MINUS_2), tail, _full(tail, _EXP_MINUS_2))
    r = torch.sqrt(-2.0 * torch.log(t))
    inv = 1.0 / r
    near = inv * _polevl(inv, _NDTRI_P1) / _polevl(inv, _NDTRI_Q1)   # r < 8: tail > 1.3e-14
    far = inv * _polevl(inv, _NDTRI_P2) / _polevl(inv, _NDTRI_Q2)
    deep = r - torch.log(r) / r - torch.where(r < 8.0, near, far)
    deep = torch.where(lower, -deep, deep)
    return torch.where(tail > _EXP_MINUS_2, central, deep)


@_in_float64()
def ndtri(p, dtype):
    """aten.special_ndtri: -inf at 0 (either sign), inf at 1, NaN off [0, 1]."""
    out = _ndtri(p - 0.5, torch.minimum(p, 1.0 - p), p < 0.5)
    out = torch.where(p == 0, _full(p, -math.inf), torch.where(p == 1, _full(p, math.inf), out))
    out = torch.where((p < 0) | (p > 1), _full(p, math.nan), out)
    return _with_nan(p, out)


@_in_float64(half=True)
def erfinv(y, dtype):
    """aten.erfinv: +-inf at +-1, NaN off [-1, 1] (zeros keep their sign)."""
    a = y.abs()
    out = _ndtri(0.5 * y, 0.5 * (1.0 - a), y < 0) * math.sqrt(0.5)
    out = torch.where(a == 1, torch.where(y < 0, _full(y, -math.inf), _full(y, math.inf)), out)
    out = torch.where(a > 1, _full(y, math.nan), out)
    return _with_nan(y, out)


# --------------------------------------------------------------------------
# Airy Ai (Cephes airy): the power series f - c g of Ai's two solutions on
# [-2.09, 2.09), the asymptotic forms in zeta = 2/3 |x|^(3/2) outside.
# --------------------------------------------------------------------------
_AI_AN = (3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
          1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
          1.40264691163389668864e+01, 9.99999999999999995305e-01)
_AI_AD = (5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
          1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
          1.40959135607834029598e+01, 1.00000000000000000470e+00)
_AI_AFN = (-1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
           -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
           -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08)
_AI_AFD = (1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
           9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
           4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07)
_AI_AGN = (1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
           9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
           5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
           8.11789239554389293311e-08, 3.41551784765923618484e-10)
_AI_AGD = (9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
           5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
           4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
           4.91834570062930015649e-09)
_INV_SQRT_PI = 5.64189583547756286948e-01
_AI_SERIES_TERMS = 12   # |x^3| <= 9.2 there: the 12th term is < 1e-29 of the sum


def _airy_oscillating(xf, dtype):
    """Ai(x) for x <= -2.09 (`xf` in the result dtype): the phase
    zeta + pi/4 is computed in the result dtype as eager's kernel does (see
    _rounded_phase): it overflows float32 past x ~ -3e25, where eager gives
    NaN (sin(inf))."""
    x = xf.double()
    zeta = -2.0 * x * torch.sqrt(-x) / 3.0
    z = 1.0 / zeta
    z2 = z * z
    f = 1.0 + z2 * _polevl(z2, _AI_AFN) / _polevl(z2, _AI_AFD)
    g = z * _polevl(z2, _AI_AGN) / _polevl(z2, _AI_AGD)
    phase = (-2.0 * xf * torch.sqrt(-xf) / 3.0 + 0.25 * math.pi).double()
    return _INV_SQRT_PI / torch.sqrt(torch.sqrt(-x)) * (torch.sin(phase) * f - torch.cos(phase) * g)


def _airy_decaying(x):
    """Ai(x) for 2.09 <= x <= 104 (float64): exp(-zeta) AN(1/zeta) / AD(1/zeta)
    / (2 sqrt(pi) x^(1/4))."""
    zeta = 2.0 * x * torch.sqrt(x) / 3.0
    ratio = _polevl(1.0 / zeta, _AI_AN) / _polevl(1.0 / zeta, _AI_AD)
    return _INV_SQRT_PI * ratio / (2.0 * torch.sqrt(torch.sqrt(x)) * torch.exp(zeta))


def _airy_series(x):
    """Ai(x) on [-2.09, 2.09] (float64): c1 f(x) - c2 g(x), f = sum of
    x^(3k) / ((2 3)(5 6)...), g = sum of x^(3k+1) / ((3 4)(6 7)...)."""
    cube = x * x * x
    m, n = torch.ones_like(x), x
    f, g = m, n
    for k in range(1, _AI_SERIES_TERMS + 1):
        m = m * cube / ((3 * k - 1) * (3 * k))
        n = n * cube / ((3 * k) * (3 * k + 1))
        f, g = f + m, g + n
    return 0.355028053887817239260 * f - 0.258819403792806798405 * g


@_in_float64()
def airy_ai(z, dtype):
    """aten.special_airy_ai: NaN at +-inf, 0 past x = 103.892, as eager."""
    oscillating = _airy_oscillating(torch.clamp(z.to(dtype), max=-2.09), dtype)   # exact: z is a dtype value
    decaying = _airy_decaying(torch.clamp(z, 2.09, 104.0))
    series = _airy_series(torch.clamp(z, -2.09, 2.09))
    out = torch.where(z < -2.09, oscillating, torch.where(z >= 2.09, decaying, series))
    out = torch.where(z > 103.892, torch.zeros_like(z), out)
    out = torch.where(z.abs() == math.inf, _full(z, math.nan), out)
    return _with_nan(z, out)


# --------------------------------------------------------------------------
# Chebyshev polynomials of the four kinds (and shifted: of 2x - 1) of a
# degree n given as a tensor: eager runs a recurrence n steps long per
# element, which a graph with static loops cannot; the closed forms hold for
# every n. With theta = acos(x) for |x| < 1 and t = acosh(|x|) past 1:
#   T_n = cos(n theta)                      cosh(n t)
#   U_n = sin((n+1) theta) / sin(theta)     sinh((n+1) t) / sinh(t)
#   V_n = cos((n+1/2) theta) / cos(theta/2) cosh((n+1/2) t) / cosh(t/2)
#   W_n = sin((n+1/2) theta) / sin(theta/2) sinh((n+1/2) t) / sinh(t/2)
# past -1: T, U times (-1)^n; V_n(x) = (-1)^n W_n(-x), W_n(x) = (-1)^n V_n(-x).
# At x = +-1 (where the ratios are 0/0) and for n < 0 (0), eager's values.
# n is truncated to an integer as eager's kernel casts it.
# --------------------------------------------------------------------------
def _chebyshev_inside(kind: str, theta, n):
    if kind == "t":
        return torch.cos(n * theta)
    if kind == "u":
        return torch.sin((n + 1) * theta) / torch.sin(theta)
    if kind == "v":
        return torch.cos((n + 0.5) * theta) / torch.cos(theta / 2)
    return torch.sin((n + 0.5) * theta) / torch.sin(theta / 2)


def _chebyshev_outside(kind: str, t, n):
    """The kind's value at |x| > 1 for x > 0 (t = acosh(x))."""
    if kind == "t":
        return torch.cosh(n * t)
    if kind == "u":
        return torch.sinh((n + 1) * t) / torch.sinh(t)
    if kind == "v":
        return torch.cosh((n + 0.5) * t) / torch.cosh(t / 2)
    return torch.sinh((n + 0.5) * t) / torch.sinh(t / 2)


# kind -> (value at x = 1, value at x = -1), as functions of n (float64).
_CHEBYSHEV_ENDS = {
    "t": (lambda n, odd: torch.ones_like(n), lambda n, odd: torch.where(odd, -1.0, 1.0)),
    "u": (lambda n, odd: n + 1, lambda n, odd: torch.where(odd, -(n + 1), n + 1)),
    "v": (lambda n, odd: torch.ones_like(n), lambda n, odd: torch.where(odd, -(2 * n + 1), 2 * n + 1)),
    "w": (lambda n, odd: 2 * n + 1, lambda n, odd: torch.where(odd, -1.0, 1.0)),
}
# The kind whose value at -x gives this kind's past -1, up to (-1)^n.
_CHEBYSHEV_MIRROR = {"t": "t", "u": "u", "v": "w", "w": "v"}


def _chebyshev(kind: str, x, n):
    """The kind's polynomial of degree n at x (float64 tensors, n integral)."""
    odd = torch.remainder(n, 2) == 1
    inside = x.clamp(-1 + 2.0 ** -52, 1 - 2.0 ** -52)
    theta = torch.acos(inside)
    t = torch.acosh(x.abs().clamp_min(1 + 2.0 ** -52))
    sign = torch.where(odd, -1.0, 1.0)
    above = _chebyshev_outside(kind, t, n)
    below = sign * _chebyshev_outside(_CHEBYSHEV_MIRROR[kind], t, n)
    out = torch.where(x > 1, above, torch.where(x < -1, below, _chebyshev_inside(kind, theta, n)))
    at_one, at_minus_one = _CHEBYSHEV_ENDS[kind]
    out = torch.where(x == 1, at_one(n, odd), torch.where(x == -1, at_minus_one(n, odd), out))
    out = torch.where(x != x, x, out)
    # Degree 0 is 1 and a negative degree 0 for every x, NaN included (eager
    # checks the degree first).
    return torch.where(n < 0, torch.zeros_like(out), torch.where(n == 0, torch.ones_like(out), out))


def _chebyshev_polynomial(kind: str, shifted: bool):
    def decomposition(x, n):
        like = x if isinstance(x, torch.Tensor) else n
        dtype = torch.result_type(x, n)
        dtype = dtype if dtype.is_floating_point else torch.get_default_dtype()
        if dtype not in (torch.float32,) or not isinstance(like, torch.Tensor):
            return NotImplemented
        xs = (x.to(dtype) if isinstance(x, torch.Tensor) else torch.full_like(like, x, dtype=dtype)).double()
        ns = (n.to(torch.float64) if isinstance(n, torch.Tensor) else torch.full_like(xs, float(n))).trunc()
        if shifted:
            xs = 2 * xs - 1
        return _chebyshev(kind, xs, ns).to(dtype)
    decomposition.__name__ = f"{'shifted_' if shifted else ''}chebyshev_polynomial_{kind}"
    return decomposition


def _chebyshev_entries():
    table = {}
    for kind in "tuvw":
        for shifted in (False, True):
            packet = getattr(aten, f"special_{'shifted_' if shifted else ''}chebyshev_polynomial_{kind}")
            for overload in ("default", "x_scalar", "n_scalar"):
                table[getattr(packet, overload)] = _chebyshev_polynomial(kind, shifted)
    return table


# --------------------------------------------------------------------------
# Hermite (physicists' H, probabilists' He), Laguerre and Legendre
# polynomials of a tensor degree n: no closed form holds for every n, so
# eager's three-term recurrence runs as a torch.while_loop (an scf.while)
# over steps t = 1 .. max(n) - 1, each element advancing while t < its own
# n (its n - 1 steps, eager's loop), in the result dtype and eager's
# operation order. A NaN carries on as NaN, which is what eager's early
# exit on NaN returns. n is truncated to an integer as eager's kernel
# casts it; n < 0 gives 0, n = 0 gives 1, n = 1 the first-degree term.
# --------------------------------------------------------------------------
def _hermite_h_step(x, t, p, q):
    return (x + x) * q - (2 * t) * p


def _hermite_he_step(x, t, p, q):
    return x * q - t * p


def _laguerre_step(x, t, p, q):
    return (((t + t) + (1.0 - x)) * q - t * p) / (t + 1)


def _legendre_step(x, t, p, q):
    return ((t + t + 1) * x * q - t * p) / (t + 1)


# kind -> (the degree-1 term, one recurrence step r(x, t, p, q) from
# p = P_{t-1}, q = P_t; t is a float tensor of the result dtype).
_RECURRENCES = {
    "hermite_polynomial_h": (lambda x: x + x, _hermite_h_step),
    "hermite_polynomial_he": (lambda x: x, _hermite_he_step),
    "laguerre_polynomial_l": (lambda x: 1.0 - x, _laguerre_step),
    "legendre_polynomial_p": (lambda x: x, _legendre_step),
}


def _recurrence(kind: str, x, n):
    """The kind's polynomial of degree n (int64) at x (broadcast, one float
    dtype)."""
    first, step = _RECURRENCES[kind]
    q0 = first(x)
    # The last step count (0 with no element, or every n below 2).
    steps = torch.cat([n.flatten(), torch.ones(1, dtype=n.dtype)]).max() - 1

    def more(t, p, q, x, n, steps):
        return t <= steps

    def advance(t, p, q, x, n, steps):
        active = t < n
        r = step(x, t.to(x.dtype), p, q)
        return t + 1, torch.where(active, q, p), torch.where(active, r, q)

    t0 = torch.ones((), dtype=torch.int64)
    _, _, q = while_loop_op(more, advance, (t0, torch.ones_like(x), q0), (x, n, steps))
    one = torch.ones_like(x)
    out = torch.where(n == 0, one, q)
    if kind == "laguerre_polynomial_l":
        out = torch.where(x == 0, one, out)
    if kind == "legendre_polynomial_p":
        edge = torch.where((x > 0) | (torch.remainder(n, 2) == 0), one, -one)
        out = torch.where(x.abs() == 1, edge, out)
    return torch.where(n < 0, torch.zeros_like(x), out)


def _recurrence_polynomial(kind: str):
    def decomposition(x, n):
        like = x if isinstance(x, torch.Tensor) else n
        dtype = torch.result_type(x, n)
        dtype = dtype if dtype.is_floating_point else torch.get_default_dtype()
        if dtype != torch.float32 or not isinstance(like, torch.Tensor):
            return NotImplemented
        xs = x.to(dtype) if isinstance(x, torch.Tensor) else torch.full_like(like, x, dtype=dtype)
        # eager casts the degree, in the common dtype, to int64
        ns = (n.to(dtype) if isinstance(n, torch.Tensor) else torch.full_like(xs, n, dtype=dtype)).to(torch.int64)
        xs, ns = torch.broadcast_tensors(xs, ns)
        return _recurrence(kind, xs.contiguous(), ns.contiguous())
    decomposition.__name__ = kind
    return decomposition


def _recurrence_entries():
    table = {}
    for kind in _RECURRENCES:
        packet = getattr(aten, f"special_{kind}")
        for overload in ("default", "x_scalar", "n_scalar"):
            table[getattr(packet, overload)] = _recurrence_polynomial(kind)
    return table


# --------------------------------------------------------------------------
# Hurwitz zeta and polygamma (eager's Cephes zeta, in float64 as eager's
# accumulator type): the direct sum of (q + i)^-x for i up to 9 (and until
# q + i > 9), then the Euler-Maclaurin tail in 12 Bernoulli terms, each
# stopping where eager's loop returns (a term below 2^-53 of the sum). The
# direct sum is unrolled _ZETA_TERMS times: q below 9 - _ZETA_TERMS (a
# polygamma of x < -50) would need more terms and gives NaN.
# --------------------------------------------------------------------------
_ZETA_TERMS = 60
_MACHEP = 1.11022302462515654042e-16
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)


def _zeta(x, q):
    """zeta(x, q) of float64 tensors (broadcast), eager's special values."""
    x, q = torch.broadcast_tensors(x, q)
    s = torch.pow(q, -x)
    a, b = q, torch.zeros_like(q)
    done = torch.zeros_like(q, dtype=torch.bool)
    looping = torch.ones_like(done)
    for i in range(_ZETA_TERMS):
        looping = looping & ~done if i < 9 else looping & ~done & (a <= 9.0)
        a = torch.where(looping, a + 1.0, a)
        b = torch.where(looping, torch.pow(a, -x), b)
        s = torch.where(looping, s + b, s)
        done = done | (looping & (-_MACHEP * s < b) & (b < _MACHEP * s))
    unfinished = looping & ~done & (a <= 9.0)
    w = a
    tail = s + b * w / (x - 1.0) - 0.5 * b
    factor, k = torch.ones_like(q), 0.0
    converged = done
    for coefficient in _ZETA_A:
        factor = factor * (x + k)
        b = b / w
        t = factor * b / coefficient
        tail = torch.where(converged, tail, tail + t)
        converged = converged | ((t / tail).abs() < _MACHEP)
        k += 1.0
        factor = factor * (x + k)
        b = b / w
        k += 1.0
    out = torch.where(done, s, tail)
    out = torch.where(unfinished, torch.full_like(out, math.nan), out)
    nonpositive = q <= 0
    out = torch.where(nonpositive & (x != torch.floor(x)), torch.full_like(out, math.nan), out)
    out = torch.where(nonpositive & (q == torch.floor(q)), torch.full_like(out, math.inf), out)
    out = torch.where(x < 1, torch.full_like(out, math.nan), out)
    return torch.where(x == 1, torch.full_like(out, math.inf), out)


def zeta(x, q):
    """aten.special_zeta (and its scalar forms)."""
    like = x if isinstance(x, torch.Tensor) else q
    dtype = torch.result_type(x, q)
    dtype = dtype if dtype.is_floating_point else torch.get_default_dtype()
    if dtype != torch.float32:
        return NotImplemented
    # A Python scalar is rounded to the dtype first, as eager's wrapped number is.
    xs = (x.to(dtype) if isinstance(x, torch.Tensor) else torch.full_like(like, x, dtype=dtype)).double()
    qs = (q.to(dtype) if isinstance(q, torch.Tensor) else torch.full_like(like, q, dtype=dtype)).double()
    return _zeta(xs, qs).to(dtype)


def _trigamma(x):
    """Eager's float trigamma, in its operation order: the reflection below
    1/2, six shifts, the asymptotic series."""
    small = x < 0.5
    sin_pi_x = torch.sin(math.pi * x)
    result = torch.where(small, -(math.pi * math.pi) / (sin_pi_x * sin_pi_x), torch.zeros_like(x))
    x = torch.where(small, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x
    return torch.where(small, -result, result)


def polygamma(n, x):
    """aten.polygamma: digamma (n = 0), eager's trigamma (n = 1), else
    (-1)^(n+1) n! zeta(n + 1, x) (eager's exp(lgamma(n + 1)) is n! within
    an ulp)."""
    dtype = _result_dtype(x)
    if dtype != torch.float32 or not isinstance(n, int) or n < 0:
        return NotImplemented
    if n == 0:
        return digamma(x)
    xs = x.to(dtype)
    if n == 1:
        return _trigamma(xs)
    factorial = float(math.factorial(n)) if n <= 170 else math.inf   # 171! overflows float64
    z = _zeta(torch.full_like(xs, n + 1.0, dtype=torch.float64), xs.double()).to(dtype)
    return (1.0 if n % 2 else -1.0) * factorial * z


DECOMPOSITIONS = {
    aten.special_zeta.default: zeta,
    aten.special_zeta.self_scalar: zeta,
    aten.special_zeta.other_scalar: zeta,
    aten.polygamma.default: polygamma,
    **_chebyshev_entries(),
    **_recurrence_entries(),
    aten.special_bessel_j0.default: bessel_j0,
    aten.special_bessel_j1.default: bessel_j1,
    aten.special_bessel_y0.default: bessel_y0,
    aten.special_bessel_y1.default: bessel_y1,
    aten.special_modified_bessel_i0.default: _modified_bessel("i", 0, scaled=False),
    aten.special_modified_bessel_i1.default: _modified_bessel("i", 1, scaled=False),
    aten.special_modified_bessel_k0.default: _modified_bessel("k", 0, scaled=False),
    aten.special_modified_bessel_k1.default: _modified_bessel("k", 1, scaled=False),
    aten.special_scaled_modified_bessel_k0.default: _modified_bessel("k", 0, scaled=True),
    aten.special_scaled_modified_bessel_k1.default: _modified_bessel("k", 1, scaled=True),
    aten.erfinv.default: erfinv,
    aten.special_ndtri.default: ndtri,
    aten.special_airy_ai.default: airy_ai,
}
