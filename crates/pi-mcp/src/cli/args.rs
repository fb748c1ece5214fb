//! Option parsing for `pi mcp`: `--name value` options, flags, repeatable options, `-l` for
//! `--local`, and `--` (or enough positionals) ending the options so a command's own flags pass.

use std::collections::HashMap;

use super::HELP_HINT;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Flag,
    Value,
    List,
}

#[derive(Default, Debug)]
pub(crate) struct Parsed {
    pub positional: Vec<String>,
    pub values: HashMap<String, String>,
    pub flags: Vec<String>,
    pub lists: HashMap<String, Vec<String>>,
}

impl Parsed {
    pub fn has(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name) || self.values.contains_key(name) || self.lists.contains_key(name)
    }

    pub fn value(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }
}

/// Parse `args`; the error is the message to print.
pub(crate) fn parse(args: &[String], known: &[(&str, Kind)], max_positionals: usize) -> Result<Parsed, String> {
    let mut parsed = Parsed::default();
    let mut index = 0;
    while index < args.len() {
        let typed = args[index].as_str();
        let arg = if typed == "-l" { "--local" } else { typed };
        if arg == "--" || parsed.positional.len() >= max_positionals {
            let from = if arg == "--" { index + 1 } else { index };
            parsed.positional.extend(args[from..].iter().cloned());
            break;
        }
        let Some(name) = arg.strip_prefix("--") else {
            parsed.positional.push(arg.to_string());
            index += 1;
            continue;
        };
        let Some((_, kind)) = known.iter().find(|(k, _)| *k == name) else {
            return Err(format!("Unknown option {typed}.\n{HELP_HINT}"));
        };
        if *kind == Kind::Flag {
            parsed.flags.push(name.to_string());
            index += 1;
            continue;
        }
        let Some(value) = args.get(index + 1) else {
            return Err(format!("{arg} needs a value."));
        };
        match kind {
            Kind::List => parsed.lists.entry(name.to_string()).or_default().push(value.clone()),
            _ => {
                parsed.values.insert(name.to_string(), value.clone());
            }
        }
        index += 2;
    }
    Ok(parsed)
}

/// `KEY=VALUE` pairs of a repeatable option, in order.
pub(crate) fn pairs(option: &str, items: Option<&Vec<String>>) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for item in items.into_iter().flatten() {
        match item.find('=') {
            Some(at) if at > 0 => out.push((item[..at].to_string(), item[at + 1..].to_string())),
            _ => return Err(format!("--{option} expects KEY=VALUE, got \"{item}\".")),
        }
    }
    Ok(out)
}

/// Levenshtein distance, to suggest a configured name for a mistyped one.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut current = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let substitution = previous[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            current[j] = (previous[j] + 1).min(current[j - 1] + 1).min(substitution);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_end_at_dashes_or_enough_positionals() {
        let known = [("local", Kind::Flag), ("env", Kind::List), ("url", Kind::Value)];
        let p = parse(
            &strings(&["x", "-l", "--env", "A=1", "--env", "B=2", "--", "cmd", "--flag"]),
            &known,
            2,
        )
        .expect("parses");
        assert_eq!(p.positional, ["x", "cmd", "--flag"]);
        assert!(p.has("local"));
        assert_eq!(p.lists["env"], ["A=1", "B=2"]);
        let p = parse(&strings(&["x", "cmd", "--url", "y"]), &known, 2).expect("parses");
        assert_eq!(p.positional, ["x", "cmd", "--url", "y"]);
        assert_eq!(
            parse(&strings(&["--nope"]), &known, 2).err().as_deref(),
            Some("Unknown option --nope.\nUse \"pi mcp --help\" for usage.")
        );
        assert_eq!(
            parse(&strings(&["--url"]), &known, 2).err().as_deref(),
            Some("--url needs a value.")
        );
    }

    #[test]
    fn pairs_and_distances() {
        assert_eq!(
            pairs("env", Some(&strings(&["A=b=c"]))),
            Ok(vec![("A".into(), "b=c".into())])
        );
        assert_eq!(
            pairs("header", Some(&strings(&["Ab"]))),
            Err("--header expects KEY=VALUE, got \"Ab\".".into())
        );
        assert_eq!(
            pairs("env", Some(&strings(&["=x"]))),
            Err("--env expects KEY=VALUE, got \"=x\".".into())
        );
        assert_eq!(edit_distance("gurkr", "gurker"), 1);
        assert_eq!(edit_distance("abc", "xyz"), 3);
    }
}
