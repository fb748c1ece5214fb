//! Numbers written the way JavaScript's JSON.stringify writes them (`0`, not `0.0`).

use serde::Serializer;

/// Serialize an `f64` as an integer when it has no fractional part, as JavaScript does.
pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if value.is_finite() && value.fract() == 0.0 && value.abs() < 9.007_199_254_740_992e15 {
        // Exact: the value is an integer below 2^53.
        #[allow(clippy::cast_possible_truncation)]
        serializer.serialize_i64(*value as i64)
    } else if value.is_finite() {
        serializer.serialize_f64(*value)
    } else {
        // JSON.stringify writes NaN and Infinity as null.
        serializer.serialize_none()
    }
}

/// Optional variant of [`serialize`].
pub fn serialize_opt<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => serialize(v, serializer),
        None => serializer.serialize_none(),
    }
}
