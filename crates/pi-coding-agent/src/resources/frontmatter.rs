//! YAML frontmatter of markdown resources (skills, prompt templates): `---` at the very
//! start, the YAML, a line starting with `---`, then the body.

use serde_json::{Map, Value};
use yaml_rust2::{Yaml, YamlLoader};

/// A markdown file split into its frontmatter and body.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Frontmatter {
    /// The YAML mapping as JSON values; empty when there is none (or it is not a mapping).
    pub fields: Map<String, Value>,
    /// The text after the frontmatter, trimmed; the whole text when there is none.
    pub body: String,
}

impl Frontmatter {
    /// A string field.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }
    /// `true` only for a YAML boolean true.
    pub fn is_true(&self, key: &str) -> bool {
        self.fields.get(key) == Some(&Value::Bool(true))
    }
}

/// Split `content` (CRLF and CR become LF first). Invalid YAML is an error with the parser's
/// message; a file without frontmatter is not.
pub fn parse_frontmatter(content: &str) -> Result<Frontmatter, String> {
    let normalized = content.replace("\r\n", "\n").replace('\r', "\n");
    if !normalized.starts_with("---") {
        return Ok(Frontmatter {
            fields: Map::new(),
            body: normalized,
        });
    }
    let Some(end) = normalized.get(3..).and_then(|rest| rest.find("\n---")).map(|i| i + 3) else {
        return Ok(Frontmatter {
            fields: Map::new(),
            body: normalized,
        });
    };
    let yaml = normalized.get(4..end).unwrap_or("");
    let body = normalized.get(end + 4..).unwrap_or("").trim().to_string();
    if yaml.is_empty() {
        return Ok(Frontmatter {
            fields: Map::new(),
            body,
        });
    }
    let docs = YamlLoader::load_from_str(yaml).map_err(|e| e.to_string())?;
    let fields = match docs.into_iter().next().map(|d| yaml_to_json(&d)) {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    Ok(Frontmatter { fields, body })
}

/// The body without the frontmatter (the whole text if the frontmatter does not parse).
pub fn strip_frontmatter(content: &str) -> String {
    match parse_frontmatter(content) {
        Ok(f) => f.body,
        Err(_) => content.to_string(),
    }
}

fn yaml_to_json(y: &Yaml) -> Value {
    match y {
        Yaml::Real(s) => y
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(s.clone())),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Array(a) => Value::Array(a.iter().map(yaml_to_json).collect()),
        Yaml::Hash(h) => {
            let mut map = Map::new();
            for (k, v) in h {
                let key = match k {
                    Yaml::String(s) | Yaml::Real(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    Yaml::Null => "null".to_string(),
                    _ => continue,
                };
                map.insert(key, yaml_to_json(v));
            }
            Value::Object(map)
        }
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_frontmatter_and_body() {
        let f = parse_frontmatter("---\r\nname: a\r\ndescription: >\r\n  folded\r\n  text\r\n---\r\n\r\nBody\r\n")
            .expect("ok");
        assert_eq!(f.str("name"), Some("a"));
        assert_eq!(f.str("description"), Some("folded text\n"));
        assert_eq!(f.body, "Body");
    }

    #[test]
    fn no_frontmatter_and_unterminated() {
        let f = parse_frontmatter("Just text\n").expect("ok");
        assert!(f.fields.is_empty());
        assert_eq!(f.body, "Just text\n");
        let f = parse_frontmatter("---\nname: a\n").expect("ok");
        assert!(f.fields.is_empty());
    }

    #[test]
    fn invalid_yaml_is_an_error() {
        assert!(parse_frontmatter("---\nname: [unclosed\n---\nbody").is_err());
    }

    #[test]
    fn booleans_are_strict() {
        let f = parse_frontmatter("---\na: true\nb: \"true\"\n---\n").expect("ok");
        assert!(f.is_true("a"));
        assert!(!f.is_true("b"));
    }
}
