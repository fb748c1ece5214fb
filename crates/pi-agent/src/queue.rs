//! The steering and follow-up queues and how they drain.

use std::collections::VecDeque;

use crate::message::AgentMessage;

/// How many queued messages one poll takes: the agent's queues, the `steeringMode` /
/// `followUpMode` settings and the RPC commands all use this one type (serialized as pi
/// spells it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum QueueMode {
    /// One message per poll (pi's default).
    #[default]
    #[serde(rename = "one-at-a-time")]
    OneAtATime,
    /// The whole queue at once.
    #[serde(rename = "all")]
    All,
}

impl QueueMode {
    pub fn as_str(self) -> &'static str {
        match self {
            QueueMode::OneAtATime => "one-at-a-time",
            QueueMode::All => "all",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "one-at-a-time" => Some(QueueMode::OneAtATime),
            "all" => Some(QueueMode::All),
            _ => None,
        }
    }
}

/// Messages waiting to be injected into a run.
#[derive(Debug, Clone, Default)]
pub struct PendingQueue {
    pub mode: QueueMode,
    items: VecDeque<AgentMessage>,
}

impl PendingQueue {
    pub fn new(mode: QueueMode) -> Self {
        PendingQueue {
            mode,
            items: VecDeque::new(),
        }
    }

    pub fn push(&mut self, message: AgentMessage) {
        self.items.push_back(message);
    }

    /// Take what one poll delivers under the queue's mode.
    pub fn drain(&mut self) -> Vec<AgentMessage> {
        match self.mode {
            QueueMode::All => self.items.drain(..).collect(),
            QueueMode::OneAtATime => self.items.pop_front().into_iter().collect(),
        }
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &AgentMessage> {
        self.items.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(mode: QueueMode) -> PendingQueue {
        let mut q = PendingQueue::new(mode);
        q.push(AgentMessage::user_text("a"));
        q.push(AgentMessage::user_text("b"));
        q
    }

    #[test]
    fn one_at_a_time_takes_the_oldest() {
        let mut q = queue(QueueMode::OneAtATime);
        assert_eq!(q.drain().len(), 1);
        assert_eq!(q.len(), 1);
        assert_eq!(q.drain().len(), 1);
        assert!(q.drain().is_empty());
    }

    #[test]
    fn all_empties_the_queue() {
        let mut q = queue(QueueMode::All);
        assert_eq!(q.drain().len(), 2);
        assert!(q.is_empty());
        assert_eq!(QueueMode::parse("all"), Some(QueueMode::All));
        assert_eq!(QueueMode::OneAtATime.as_str(), "one-at-a-time");
    }
}
