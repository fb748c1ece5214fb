//! The OKLab, OKLCH and OKHSL colour spaces (Björn Ottosson's, as pi 1.6 uses them to build
//! the `system` theme) to and from sRGB. Colours are sRGB channels 0-255 as `f64`; what comes
//! back from OKHSL or OKLCH is rounded to whole channels and clipped into the gamut, as pi's
//! colour functions return it.

/// sRGB channels, 0-255.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rgb {
    pub r: f64,
    pub g: f64,
    pub b: f64,
}

impl Rgb {
    pub fn new(r: f64, g: f64, b: f64) -> Rgb {
        Rgb { r, g, b }
    }
}

/// OKHSL: hue in degrees, saturation and lightness 0-1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Okhsl {
    pub h: f64,
    pub s: f64,
    pub l: f64,
}

/// OKLCH: lightness 0-1, chroma, hue in degrees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Oklch {
    pub l: f64,
    pub c: f64,
    pub h: f64,
}

type Mat = [[f64; 3]; 3];

const LINEAR_TO_LMS: Mat = [
    [0.4122214694707629, 0.5363325372617349, 0.0514459932675022],
    [0.2119034958178251, 0.6806995506452344, 0.1073969535369405],
    [0.0883024591900564, 0.2817188391361215, 0.6299787016738222],
];
const LMS_TO_LAB: Mat = [
    [0.210454268309314, 0.793617774702305, -0.0040720430116193],
    [1.9779985324311684, -2.42859224204858, 0.450593709617411],
    [0.0259040424655478, 0.7827717124575296, -0.8086757549230774],
];
const LAB_TO_LMS: Mat = [
    [1.0, 0.3963377773761749, 0.2158037573099136],
    [1.0, -0.1055613458156586, -0.0638541728258133],
    [1.0, -0.0894841775298119, -1.2914855480194092],
];
const LMS_TO_LINEAR: Mat = [
    [4.076741636075958, -3.307711539258063, 0.2309699031821043],
    [-1.2684379732850315, 2.609757349287688, -0.341319376002657],
    [-0.0041960761386756, -0.7034186179359362, 1.7076146940746117],
];

fn mul(m: &Mat, v: [f64; 3]) -> [f64; 3] {
    m.map(|row| row[0] * v[0] + row[1] * v[1] + row[2] * v[2])
}

/// The fitted maximum saturation per channel: the (a, b) half-plane where that channel
/// clips first, and the polynomial's coefficients.
const SATURATION_FIT: [([f64; 2], [f64; 5]); 3] = [
    (
        [-1.8817031, -0.80936501],
        [1.19086277, 1.76576728, 0.59662641, 0.75515197, 0.56771245],
    ),
    (
        [1.8144408, -1.19445267],
        [0.73956515, -0.45954404, 0.08285427, 0.12541073, -0.14503204],
    ),
    (
        [0.13110758, 1.81333971],
        [1.35733652, -0.00915799, -1.1513021, -0.50559606, 0.00692167],
    ),
];

const K1: f64 = 0.206;
const K2: f64 = 0.03;
const K3: f64 = (1.0 + K1) / (1.0 + K2);

/// OKLab lightness to OKHSL lightness (the "toe").
pub fn oklab_to_okhsl_lightness(x: f64) -> f64 {
    0.5 * (K3 * x - K1 + ((K3 * x - K1).powf(2.0) + 4.0 * K2 * K3 * x).sqrt())
}

fn okhsl_to_oklab_lightness(x: f64) -> f64 {
    (x * x + K1 * x) / (K3 * (x + K2))
}

fn to_srgb(v: f64) -> f64 {
    if v > 0.0031308 {
        1.055 * v.powf(1.0 / 2.4) - 0.055
    } else {
        12.92 * v
    }
}

fn to_linear(v: f64) -> f64 {
    if v <= 0.04045 {
        v / 12.92
    } else {
        ((v + 0.055) / 1.055).powf(2.4)
    }
}

/// OKLab [L, a, b] to linear sRGB (may leave the gamut).
fn oklab_to_linear(lab: [f64; 3]) -> [f64; 3] {
    mul(&LMS_TO_LINEAR, mul(&LAB_TO_LMS, lab).map(|v| v.powf(3.0)))
}

/// sRGB to OKLab [L, a, b].
pub fn rgb_to_oklab(c: Rgb) -> [f64; 3] {
    let linear = [c.r, c.g, c.b].map(|v| to_linear(v / 255.0));
    mul(&LMS_TO_LAB, mul(&LINEAR_TO_LMS, linear).map(f64::cbrt))
}

/// Linear sRGB to whole sRGB channels, clipped.
fn linear_to_rgb(linear: [f64; 3]) -> Rgb {
    let [r, g, b] = linear.map(|v| (to_srgb(v).clamp(0.0, 1.0) * 255.0).round());
    Rgb { r, g, b }
}

fn lms_slopes(a: f64, b: f64) -> [f64; 3] {
    LAB_TO_LMS.map(|row| row[1] * a + row[2] * b)
}

/// The largest saturation (C/L) inside sRGB for the hue (a, b): the fit and one Halley step.
fn max_saturation(a: f64, b: f64) -> f64 {
    let channel = SATURATION_FIT
        .iter()
        .position(|([x, y], _)| x * a + y * b > 1.0)
        .unwrap_or(2);
    let [k0, k1, k2, k3, k4] = SATURATION_FIT[channel].1;
    let w = LMS_TO_LINEAR[channel];
    let s = k0 + k1 * a + k2 * b + k3 * a * a + k4 * a * b;
    let k = lms_slopes(a, b);
    let base = k.map(|k| 1.0 + s * k);
    let dot = |v: [f64; 3]| w[0] * v[0] + w[1] * v[1] + w[2] * v[2];
    let f = dot(base.map(|v| v.powf(3.0)));
    let f1 = dot([0, 1, 2].map(|i| 3.0 * k[i] * base[i].powf(2.0)));
    let f2 = dot([0, 1, 2].map(|i| 6.0 * k[i].powf(2.0) * base[i]));
    s - (f * f1) / (f1 * f1 - 0.5 * f * f2)
}

/// OKLab lightness and chroma of the most saturated colour of the hue (a, b).
fn cusp(a: f64, b: f64) -> (f64, f64) {
    let s = max_saturation(a, b);
    let rgb = oklab_to_linear([1.0, s * a, s * b]);
    let l = (1.0 / rgb[0].max(rgb[1]).max(rgb[2])).cbrt();
    (l, l * s)
}

/// The chroma at which the line of lightness `l` leaves the gamut.
fn max_chroma(a: f64, b: f64, l: f64, (cusp_l, cusp_c): (f64, f64)) -> f64 {
    if l <= cusp_l {
        return cusp_c * l / cusp_l;
    }
    let t = cusp_c * (l - 1.0) / (cusp_l - 1.0);
    let k = lms_slopes(a, b);
    let lms = k.map(|k| l + t * k);
    let cubes = lms.map(|v| v.powf(3.0));
    let first = [0, 1, 2].map(|i| 3.0 * k[i] * lms[i].powf(2.0));
    let second = [0, 1, 2].map(|i| 6.0 * k[i].powf(2.0) * lms[i]);
    let dot = |row: [f64; 3], v: [f64; 3]| row[0] * v[0] + row[1] * v[1] + row[2] * v[2];
    let step = LMS_TO_LINEAR
        .iter()
        .map(|row| {
            let f = dot(*row, cubes) - 1.0;
            let f1 = dot(*row, first);
            let f2 = dot(*row, second);
            let u = f1 / (f1 * f1 - 0.5 * f * f2);
            if u >= 0.0 {
                -f * u
            } else {
                f64::MAX
            }
        })
        .fold(f64::INFINITY, f64::min);
    t + step
}

/// OKHSL's chroma stops at lightness `l` and hue (a, b): zero-ish, mid, max.
fn chroma_stops(l: f64, a: f64, b: f64) -> (f64, f64, f64) {
    let peak = cusp(a, b);
    let c_max = max_chroma(a, b, l, peak);
    let k = c_max / (l * (peak.1 / peak.0)).min((1.0 - l) * (peak.1 / (1.0 - peak.0)));
    let mid_s = 0.11516993
        + 1.0
            / (7.4477897
                + 4.1590124 * b
                + a * (-2.19557347
                    + 1.75198401 * b
                    + a * (-2.13704948 - 10.02301043 * b + a * (-4.24894561 + 5.38770819 * b + 4.69891013 * a))));
    let mid_t = 0.11239642
        + 1.0
            / (1.6132032 - 0.68124379 * b
                + a * (0.40370612
                    + 0.90148123 * b
                    + a * (-0.27087943 + 0.6122399 * b + a * (0.00299215 - 0.45399568 * b - 0.14661872 * a))));
    let c_mid = 0.9
        * k
        * (1.0 / (1.0 / (l * mid_s).powf(4.0) + 1.0 / ((1.0 - l) * mid_t).powf(4.0)))
            .sqrt()
            .sqrt();
    let c0 = (1.0 / (1.0 / (l * 0.4).powf(2.0) + 1.0 / ((1.0 - l) * 0.8).powf(2.0))).sqrt();
    (c0, c_mid, c_max)
}

/// An OKHSL colour in sRGB, whole channels.
pub fn okhsl_to_rgb(h: f64, s: f64, l: f64) -> Rgb {
    let big_l = okhsl_to_oklab_lightness(l);
    let mut lab = [big_l, 0.0, 0.0];
    if big_l > 0.0 && big_l < 1.0 && s > 0.0 {
        let angle = 2.0 * std::f64::consts::PI * (((h % 360.0) + 360.0) % 360.0) / 360.0;
        let (a, b) = (angle.cos(), angle.sin());
        let (c0, c_mid, c_max) = chroma_stops(big_l, a, b);
        // From 0 through the mid stop at s = 0.8 to the gamut's edge at s = 1.
        let chroma = if s < 0.8 {
            let t = 1.25 * s;
            let k1 = 0.8 * c0;
            t * k1 / (1.0 - (1.0 - k1 / c_mid) * t)
        } else {
            let t = 5.0 * (s - 0.8);
            let k1 = 0.2 * c_mid.powf(2.0) * 1.25f64.powf(2.0) / c0;
            c_mid + t * k1 / (1.0 - (1.0 - k1 / (c_max - c_mid)) * t)
        };
        lab = [big_l, chroma * a, chroma * b];
    }
    linear_to_rgb(oklab_to_linear(lab))
}

/// An sRGB colour in OKHSL (hue 0 for greys).
pub fn rgb_to_okhsl(c: Rgb) -> Okhsl {
    let [big_l, a, b] = rgb_to_oklab(c);
    let chroma = a.hypot(b);
    let l = oklab_to_okhsl_lightness(big_l);
    if chroma < 1e-9 || l <= 0.0 || l >= 1.0 {
        return Okhsl { h: 0.0, s: 0.0, l };
    }
    let h = (b.atan2(a).to_degrees() + 360.0) % 360.0;
    let (c0, c_mid, c_max) = chroma_stops(big_l, a / chroma, b / chroma);
    let s = if chroma < c_mid {
        let k1 = 0.8 * c0;
        0.8 * (chroma / (k1 + (1.0 - k1 / c_mid) * chroma))
    } else {
        let k1 = 0.2 * c_mid.powf(2.0) * 1.25f64.powf(2.0) / c0;
        let off = chroma - c_mid;
        0.8 + 0.2 * (off / (k1 + (1.0 - k1 / (c_max - c_mid)) * off))
    };
    Okhsl {
        h,
        s: s.clamp(0.0, 1.0),
        l,
    }
}

/// An sRGB colour in OKLCH.
pub fn rgb_to_oklch(c: Rgb) -> Oklch {
    let [l, a, b] = rgb_to_oklab(c);
    Oklch {
        l,
        c: a.hypot(b),
        h: (b.atan2(a).to_degrees() + 360.0) % 360.0,
    }
}

/// An OKLCH colour in sRGB, whole channels: chroma is reduced (hue and lightness kept) until
/// the colour fits the gamut.
pub fn oklch_to_rgb(c: Oklch) -> Rgb {
    let h = ((c.h % 360.0) + 360.0) % 360.0;
    let rad = h.to_radians();
    let (cos, sin) = (rad.cos(), rad.sin());
    let at = |chroma: f64| oklab_to_linear([c.l, chroma * cos, chroma * sin]);
    let fits = |v: [f64; 3]| v.iter().all(|x| *x >= -1e-7 && *x <= 1.0 + 1e-7);
    let direct = at(c.c);
    if fits(direct) {
        return linear_to_rgb(direct);
    }
    let mut linear = at(0.0);
    let (mut low, mut high) = (0.0, c.c);
    for _ in 0..20 {
        let chroma = (low + high) / 2.0;
        let candidate = at(chroma);
        if fits(candidate) {
            low = chroma;
            linear = candidate;
        } else {
            high = chroma;
        }
    }
    linear_to_rgb(linear)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_okhsl() {
        for (r, g, b) in [
            (255.0, 0.0, 0.0),
            (12.0, 200.0, 90.0),
            (40.0, 44.0, 52.0),
            (244.0, 184.0, 228.0),
        ] {
            let c = Rgb::new(r, g, b);
            let hsl = rgb_to_okhsl(c);
            assert_eq!(okhsl_to_rgb(hsl.h, hsl.s, hsl.l), c);
            assert_eq!(oklch_to_rgb(rgb_to_oklch(c)), c);
        }
        assert_eq!(okhsl_to_rgb(0.0, 0.0, 1.0), Rgb::new(255.0, 255.0, 255.0));
        // Out of gamut: the chroma shrinks until it fits, so pure white stays white.
        assert_eq!(
            oklch_to_rgb(Oklch {
                l: 1.0,
                c: 0.3,
                h: 150.0
            }),
            Rgb::new(255.0, 255.0, 255.0)
        );
    }
}
