//! Numbers written the way JavaScript's `JSON.stringify` writes them: `0` not `0.0`,
//! `0.000004` not `4e-6`, `1e-7` and `1e+21` in exponent form.

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

/// JavaScript's `Number.prototype.toString` for a finite value: the shortest digits that
/// round-trip, in plain decimal from 1e-6 up to (not including) 1e21, else in exponent form.
pub fn js_number_string(value: f64) -> String {
    if value == 0.0 {
        return "0".to_string();
    }
    // `{:e}` gives the shortest round-trip digits, e.g. `-1.393e-3`.
    let sci = format!("{value:e}");
    let (negative, sci) = match sci.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, sci.as_str()),
    };
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    // Position of the decimal point relative to the digits, as in the ECMAScript algorithm.
    let n = exponent + 1;
    let mut out = String::with_capacity(digits.len() + 8);
    if negative {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
    out
}

/// Serialize an `f64` as JavaScript would (NaN and infinities become `null`).
pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if !value.is_finite() {
        return serializer.serialize_none();
    }
    if value.fract() == 0.0 && value.abs() < 9.007_199_254_740_992e15 {
        // Exact: an integer below 2^53.
        #[allow(clippy::cast_possible_truncation)]
        return serializer.serialize_i64(*value as i64);
    }
    match RawValue::from_string(js_number_string(*value)) {
        Ok(raw) => raw.serialize(serializer),
        Err(_) => serializer.serialize_f64(*value),
    }
}

/// Optional variant of [`serialize`].
pub fn serialize_opt<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => serialize(v, serializer),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_javascript_number_to_string() {
        for (v, js) in [
            (0.000004, "0.000004"),
            (0.0000004, "4e-7"),
            (1e-7, "1e-7"),
            (0.001393, "0.001393"),
            (0.004488000000000001, "0.004488000000000001"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1.5, "1.5"),
            (-2.25, "-2.25"),
            (123456.789, "123456.789"),
            (1e21, "1e+21"),
            (1.5e22, "1.5e+22"),
            (1e20, "100000000000000000000"),
            (42.0, "42"),
        ] {
            assert_eq!(js_number_string(v), js, "{v}");
        }
    }

    #[test]
    fn serializes_through_serde_json() {
        #[derive(Serialize)]
        struct S {
            #[serde(serialize_with = "serialize")]
            a: f64,
            #[serde(serialize_with = "serialize")]
            b: f64,
        }
        let json = serde_json::to_string(&S { a: 0.000004, b: 3.0 }).expect("serialize");
        assert_eq!(json, r#"{"a":0.000004,"b":3}"#);
    }
}
