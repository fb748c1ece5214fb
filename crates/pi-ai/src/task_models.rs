//! The catalogue's models that are not chat models: image generators and classifiers (pi 1.6's
//! `IMAGE_MODELS` and `CLASSIFIER_MODELS`), from `data/task-models.jsonl`, which
//! `scripts/generate-models` writes beside the chat catalogue. Each entry keeps its catalogue
//! JSON as it is (what a script lists) and the fields a request needs.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::types::{InputKind, Model, ModelCost};

const CATALOGUE: &str = include_str!("../data/task-models.jsonl");

/// What a task model does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskKind {
    Image,
    Classifier,
}

impl TaskKind {
    /// pi's name of the kind (`image`, `classifier`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::Image => "image",
            TaskKind::Classifier => "classifier",
        }
    }
}

/// An image or classifier model.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskModel {
    #[serde(rename = "type")]
    pub kind: TaskKind,
    pub id: String,
    pub name: String,
    pub api: String,
    pub provider: String,
    pub base_url: String,
    #[serde(default)]
    pub input: Vec<InputKind>,
    /// What an image model returns (`image`, and `text` for some).
    #[serde(default)]
    pub output: Vec<String>,
    #[serde(default)]
    pub cost: ModelCost,
    #[serde(default)]
    pub context_window: Option<u64>,
    #[serde(default)]
    pub headers: Option<Map<String, Value>>,
    #[serde(default)]
    pub compat: Option<Map<String, Value>>,
    /// The catalogue entry as written.
    #[serde(skip)]
    pub json: Value,
}

impl TaskModel {
    /// Read one catalogue entry (also a models.json or script-supplied one).
    pub fn from_json(json: Value) -> Result<TaskModel, String> {
        let mut model: TaskModel = serde_json::from_value(json.clone()).map_err(|e| e.to_string())?;
        model.json = json;
        Ok(model)
    }

    /// The chat-model view the shared helpers take (prices for the cost, headers, base URL).
    pub fn as_model(&self) -> Model {
        Model {
            id: self.id.clone(),
            name: self.name.clone(),
            api: self.api.clone(),
            provider: self.provider.clone(),
            base_url: self.base_url.clone(),
            reasoning: false,
            input: self.input.clone(),
            cost: self.cost.clone(),
            context_window: self.context_window.unwrap_or(0),
            max_tokens: 0,
            headers: self.headers.clone(),
            compat: self.compat.clone().map(Value::Object),
            thinking_level_map: None,
            prompt_cache: None,
        }
    }

    /// A `compat` switch of the model, if set.
    pub fn compat_value(&self, key: &str) -> Option<&Value> {
        self.compat.as_ref().and_then(|c| c.get(key))
    }
}

/// Every built-in image and classifier model, images first, in catalogue order. A line that
/// does not read is left out (the tests below check there is none).
pub fn task_models() -> &'static [TaskModel] {
    static ALL: OnceLock<Vec<TaskModel>> = OnceLock::new();
    ALL.get_or_init(|| {
        CATALOGUE
            .lines()
            .filter(|line| !line.trim().is_empty())
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter_map(|json| TaskModel::from_json(json).ok())
            .collect()
    })
}

/// The built-in models of one kind (of one provider).
pub fn task_models_of(kind: TaskKind, provider: Option<&str>) -> impl Iterator<Item = &'static TaskModel> + '_ {
    task_models()
        .iter()
        .filter(move |m| m.kind == kind && provider.is_none_or(|p| m.provider == p))
}

/// One built-in model by kind, provider and id.
pub fn get_task_model(kind: TaskKind, provider: &str, id: &str) -> Option<&'static TaskModel> {
    task_models_of(kind, Some(provider)).find(|m| m.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_holds_pi_1_6s_image_and_classifier_models() {
        let lines = CATALOGUE.lines().filter(|l| !l.trim().is_empty()).count();
        assert_eq!(task_models().len(), lines, "every line reads");
        assert_eq!(task_models_of(TaskKind::Image, None).count(), 74);
        assert_eq!(task_models_of(TaskKind::Classifier, None).count(), 81);
        let apis: std::collections::BTreeSet<&str> = task_models().iter().map(|m| m.api.as_str()).collect();
        assert_eq!(
            apis.into_iter().collect::<Vec<_>>(),
            [
                "cloudflare-workers-ai-system-one",
                "openai-decisions",
                "openrouter-images",
                "typesafe-system-one"
            ]
        );
        let jev = get_task_model(TaskKind::Classifier, "typesafe", "jev-latest").expect("jev");
        assert_eq!(jev.base_url, "https://api.typesafe.ai/v1/");
        assert_eq!(jev.compat_value("imageInput"), Some(&Value::from("assets")));
        assert_eq!(jev.json["type"], "classifier");
        assert!(get_task_model(TaskKind::Image, "typesafe", "jev-latest").is_none());
        let image = task_models_of(TaskKind::Image, Some("openrouter"))
            .next()
            .expect("an image model");
        assert!(image.output.iter().any(|o| o == "image"));
    }
}
