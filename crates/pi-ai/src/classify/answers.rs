//! One answer of a classifier reply read into pi's shape (`choice` with probabilities and a
//! confidence, `score` with a confidence, `bool` with a probability). The APIs differ only in
//! how they spell a choice's probabilities and a yes/no answer; [`AnswerShape`] names those
//! differences, the checks and error words are the same for all.

use serde_json::{json, Map, Value};

use super::{required_number, ClassifierContext};

/// One entry of a choice's probabilities: the choice and its number, or `None` for an entry
/// that does not name a choice (the whole list is then invalid).
pub(super) type ProbabilityEntry<'a> = Option<(String, Option<&'a Value>)>;

/// How one API spells the parts of an answer that differ.
pub(super) struct AnswerShape {
    /// The service's name in error messages.
    pub label: &'static str,
    /// The `type` of a yes/no answer (`noul`, `predicate`).
    pub bool_type: &'static str,
    /// The field holding its probability.
    pub bool_field: &'static str,
    /// What a missing yes/no answer is called in the error (`bool`, `predicate`).
    pub bool_word: &'static str,
    /// A choice answer's probabilities in reply order; `None` when they are not a list or map.
    pub probabilities: for<'a> fn(&'a Value) -> Option<Vec<ProbabilityEntry<'a>>>,
}

impl AnswerShape {
    /// Read the answer to question `id`.
    pub(super) fn parse(&self, id: &str, question: &Value, answer: &Value) -> Result<Value, String> {
        let label = self.label;
        let kind = answer.get("type").and_then(Value::as_str);
        let number = |field: &str, what: String| required_number(label, answer.get(field), &what);
        match ClassifierContext::question_type(question) {
            "choice" => {
                let Some(choice) = answer
                    .get("choice")
                    .and_then(Value::as_str)
                    .filter(|_| kind == Some("choice"))
                else {
                    return Err(format!("{label} did not return a choice answer for {id}"));
                };
                let invalid = || format!("{label} returned invalid probabilities for {id}");
                let mut probabilities = Map::new();
                for entry in (self.probabilities)(answer).ok_or_else(invalid)? {
                    let (value, p) = entry.ok_or_else(invalid)?;
                    let p = required_number(label, p, &format!("probability for {id}.{value}"))?;
                    probabilities.insert(value, p);
                }
                Ok(json!({
                    "type": "choice",
                    "choice": choice,
                    "probabilities": probabilities,
                    "confidence": number("confidence", format!("confidence for {id}"))?,
                }))
            }
            "score" => {
                if kind != Some("score") {
                    return Err(format!("{label} did not return a score answer for {id}"));
                }
                Ok(json!({
                    "type": "score",
                    "score": number("score", format!("score for {id}"))?,
                    "confidence": number("confidence", format!("confidence for {id}"))?,
                }))
            }
            _ => {
                if kind != Some(self.bool_type) {
                    return Err(format!("{label} did not return a {} answer for {id}", self.bool_word));
                }
                Ok(json!({
                    "type": "bool",
                    "probability": number(self.bool_field, format!("probability for {id}"))?,
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map_probabilities(answer: &Value) -> Option<Vec<ProbabilityEntry<'_>>> {
        let map = answer.get("probabilities")?.as_object()?;
        Some(map.iter().map(|(k, v)| Some((k.clone(), Some(v)))).collect())
    }

    const SHAPE: AnswerShape = AnswerShape {
        label: "Test API",
        bool_type: "yes-no",
        bool_field: "p",
        bool_word: "yes-no",
        probabilities: map_probabilities,
    };

    #[test]
    fn answers_are_read_and_checked_in_the_shape_given() {
        let choice = json!({"type": "choice"});
        let answer =
            json!({"type": "choice", "choice": "a", "probabilities": {"a": 0.75, "b": 0.25}, "confidence": 0.5});
        assert_eq!(
            SHAPE.parse("q", &choice, &answer).unwrap(),
            json!({"type": "choice", "choice": "a", "probabilities": {"a": 0.75, "b": 0.25}, "confidence": 0.5})
        );
        let bad = json!({"type": "choice", "choice": "a", "probabilities": {"a": "high"}, "confidence": 0.5});
        assert_eq!(
            SHAPE.parse("q", &choice, &bad).unwrap_err(),
            "Test API returned an invalid probability for q.a"
        );
        let no_list = json!({"type": "choice", "choice": "a", "probabilities": 3, "confidence": 0.5});
        assert_eq!(
            SHAPE.parse("q", &choice, &no_list).unwrap_err(),
            "Test API returned invalid probabilities for q"
        );
        let yes_no = json!({"type": "bool"});
        assert_eq!(
            SHAPE.parse("q", &yes_no, &json!({"type": "yes-no", "p": 0.9})).unwrap(),
            json!({"type": "bool", "probability": 0.9})
        );
        assert_eq!(
            SHAPE
                .parse("q", &yes_no, &json!({"type": "bool", "probability": 0.9}))
                .unwrap_err(),
            "Test API did not return a yes-no answer for q"
        );
        let score = json!({"type": "score"});
        assert_eq!(
            SHAPE
                .parse("q", &score, &json!({"type": "score", "score": 2, "confidence": null}))
                .unwrap_err(),
            "Test API returned an invalid confidence for q"
        );
    }
}
