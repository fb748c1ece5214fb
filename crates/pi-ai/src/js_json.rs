//! The message Node's `JSON.parse` (V8) gives for invalid JSON, which pi shows verbatim: after
//! `Failed to parse command: ` in RPC mode, and as the error of a classifier whose reply is not
//! JSON. Only used for text serde already rejected.

/// Context characters V8 shows on each side of an unexpected token in a long source.
const CONTEXT: usize = 10;

enum Failure {
    /// Unexpected token at this UTF-16 offset.
    Token(usize),
    Eos,
    Number(usize),
    /// `<what> in JSON at position <n>`.
    At(&'static str, usize),
    /// Text after a complete value.
    After(usize),
}

/// V8's error message for `JSON.parse(source)`. `source` is assumed to be invalid JSON.
pub fn parse_error_message(source: &str) -> String {
    let units: Vec<u16> = source.encode_utf16().collect();
    let mut p = Parser { s: &units, i: 0 };
    let failure = match p.document() {
        Err(f) => f,
        // serde refused something V8 accepts (e.g. nesting deeper than serde's limit).
        Ok(()) => return "Maximum call stack size exceeded".into(),
    };
    match failure {
        Failure::Eos => "Unexpected end of JSON input".into(),
        Failure::Number(pos) => format!("Unexpected number in JSON at position {}", place(&units, pos)),
        Failure::After(pos) => format!(
            "Unexpected non-whitespace character after JSON at position {}",
            place(&units, pos)
        ),
        Failure::At(what, pos) => format!("{what} in JSON at position {}", place(&units, pos)),
        Failure::Token(pos) => unexpected_token(source, &units, pos),
    }
}

/// `<pos> (line <l> column <c>)`, as Node 22's V8 gives a position: lines end at `\n`, `\r`
/// or `\r\n`, columns count UTF-16 units from 1.
fn place(units: &[u16], pos: usize) -> String {
    const CR: u16 = b'\r' as u16;
    const LF: u16 = b'\n' as u16;
    let (mut line, mut line_start, mut i) = (1, 0, 0);
    while i < pos.min(units.len()) {
        match units[i] {
            CR => {
                if units.get(i + 1) == Some(&LF) {
                    i += 1;
                }
                line += 1;
                line_start = i + 1;
            }
            LF => {
                line += 1;
                line_start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    format!("{pos} (line {line} column {})", pos + 1 - line_start.min(pos + 1))
}

fn unexpected_token(source: &str, units: &[u16], pos: usize) -> String {
    if matches!(source, "NaN" | "Infinity" | "undefined" | "[object Object]") {
        return format!("\"{source}\" is not valid JSON");
    }
    let token = String::from_utf16_lossy(&units[pos..pos + 1]);
    let len = units.len();
    let text = |a: usize, b: usize| String::from_utf16_lossy(&units[a..b.min(len)]);
    if len < CONTEXT * 2 + 1 {
        format!("Unexpected token '{token}', \"{source}\" is not valid JSON")
    } else if pos < CONTEXT {
        format!(
            "Unexpected token '{token}', \"{}\"... is not valid JSON",
            text(0, pos + CONTEXT)
        )
    } else if pos < len - CONTEXT {
        format!(
            "Unexpected token '{token}', ...\"{}\"... is not valid JSON",
            text(pos - CONTEXT, pos + CONTEXT)
        )
    } else {
        format!(
            "Unexpected token '{token}', ...\"{}\" is not valid JSON",
            text(pos - CONTEXT, len)
        )
    }
}

struct Parser<'a> {
    s: &'a [u16],
    i: usize,
}

type Step = Result<(), Failure>;

impl Parser<'_> {
    fn peek(&self) -> Option<u16> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(0x20 | 0x09 | 0x0a | 0x0d)) {
            self.i += 1;
        }
    }

    fn document(&mut self) -> Step {
        self.ws();
        self.value()?;
        self.ws();
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(Failure::After(self.i)),
        }
    }

    fn value(&mut self) -> Step {
        match self.peek() {
            Some(0x22) => self.string(),
            Some(0x7b) => self.object(),
            Some(0x5b) => self.array(),
            Some(0x74) => self.literal("true"),
            Some(0x66) => self.literal("false"),
            Some(0x6e) => self.literal("null"),
            Some(c) if c == u16::from(b'-') || (0x30..=0x39).contains(&c) => self.number(),
            _ => Err(self.unexpected_value()),
        }
    }

    /// A token that cannot start a value.
    fn unexpected_value(&self) -> Failure {
        match self.peek() {
            None => Failure::Eos,
            Some(_) => Failure::Token(self.i),
        }
    }

    fn literal(&mut self, word: &str) -> Step {
        for b in word.bytes() {
            match self.peek() {
                Some(c) if c == u16::from(b) => self.i += 1,
                None => return Err(Failure::Eos),
                Some(_) => return Err(Failure::Token(self.i)),
            }
        }
        Ok(())
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(0x30..=0x39)) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Step {
        if self.peek() == Some(u16::from(b'-')) {
            self.i += 1;
            if !matches!(self.peek(), Some(0x30..=0x39)) {
                return Err(Failure::At("No number after minus sign", self.i));
            }
        }
        if self.peek() == Some(u16::from(b'0')) {
            self.i += 1;
            if matches!(self.peek(), Some(0x30..=0x39)) {
                return Err(Failure::Number(self.i));
            }
        } else {
            self.digits();
        }
        if self.peek() == Some(u16::from(b'.')) {
            self.i += 1;
            if self.digits() == 0 {
                return Err(Failure::At("Unterminated fractional number", self.i));
            }
        }
        if matches!(self.peek(), Some(0x65 | 0x45)) {
            self.i += 1;
            if matches!(self.peek(), Some(0x2b | 0x2d)) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(Failure::At("Exponent part is missing a number", self.i));
            }
        }
        Ok(())
    }

    fn string(&mut self) -> Step {
        self.i += 1;
        loop {
            match self.peek() {
                None => return Err(Failure::At("Unterminated string", self.i)),
                Some(0x22) => {
                    self.i += 1;
                    return Ok(());
                }
                Some(0x5c) => {
                    self.i += 1;
                    match self.peek() {
                        None => return Err(Failure::At("Unterminated string", self.i)),
                        Some(0x22 | 0x5c | 0x2f | 0x62 | 0x66 | 0x6e | 0x72 | 0x74) => self.i += 1,
                        Some(0x75) => {
                            self.i += 1;
                            for _ in 0..4 {
                                match self.peek() {
                                    Some(c) if char::from_u32(u32::from(c)).is_some_and(|c| c.is_ascii_hexdigit()) => {
                                        self.i += 1;
                                    }
                                    None => return Err(Failure::At("Unterminated string", self.i)),
                                    Some(_) => return Err(Failure::At("Bad Unicode escape", self.i)),
                                }
                            }
                        }
                        Some(_) => return Err(Failure::At("Bad escaped character", self.i)),
                    }
                }
                Some(c) if c < 0x20 => return Err(Failure::At("Bad control character in string literal", self.i)),
                Some(_) => self.i += 1,
            }
        }
    }

    fn object(&mut self) -> Step {
        self.i += 1;
        self.ws();
        match self.peek() {
            Some(0x7d) => {
                self.i += 1;
                return Ok(());
            }
            Some(0x22) => {}
            _ => return Err(Failure::At("Expected property name or '}'", self.i)),
        }
        loop {
            self.string()?;
            self.ws();
            if self.peek() != Some(u16::from(b':')) {
                return Err(Failure::At("Expected ':' after property name", self.i));
            }
            self.i += 1;
            self.ws();
            self.value()?;
            self.ws();
            match self.peek() {
                Some(0x7d) => {
                    self.i += 1;
                    return Ok(());
                }
                Some(0x2c) => {
                    self.i += 1;
                    self.ws();
                    if self.peek() != Some(u16::from(b'"')) {
                        return Err(Failure::At("Expected double-quoted property name", self.i));
                    }
                }
                _ => return Err(Failure::At("Expected ',' or '}' after property value", self.i)),
            }
        }
    }

    fn array(&mut self) -> Step {
        self.i += 1;
        self.ws();
        if self.peek() == Some(u16::from(b']')) {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.value()?;
            self.ws();
            match self.peek() {
                Some(0x5d) => {
                    self.i += 1;
                    return Ok(());
                }
                Some(0x2c) => {
                    self.i += 1;
                    self.ws();
                }
                _ => return Err(Failure::At("Expected ',' or ']' after array element", self.i)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_error_message;

    /// Messages recorded from Node 22 (`JSON.parse`), the runtime of the reference pi.
    #[test]
    fn matches_node_messages() {
        let cases = [
            (
                "this is not json",
                r#"Unexpected token 'h', "this is not json" is not valid JSON"#,
            ),
            ("", "Unexpected end of JSON input"),
            (
                "{",
                "Expected property name or '}' in JSON at position 1 (line 1 column 2)",
            ),
            ("[", "Unexpected end of JSON input"),
            (
                r#"{"a":1"#,
                "Expected ',' or '}' after property value in JSON at position 6 (line 1 column 7)",
            ),
            (
                r#"{"a" 1}"#,
                "Expected ':' after property name in JSON at position 5 (line 1 column 6)",
            ),
            (
                r#"{"a":1,}"#,
                "Expected double-quoted property name in JSON at position 7 (line 1 column 8)",
            ),
            ("[1,]", r#"Unexpected token ']', "[1,]" is not valid JSON"#),
            (
                "[1 2]",
                "Expected ',' or ']' after array element in JSON at position 3 (line 1 column 4)",
            ),
            (r#""abc"#, "Unterminated string in JSON at position 4 (line 1 column 5)"),
            (
                "-x",
                "No number after minus sign in JSON at position 1 (line 1 column 2)",
            ),
            (
                "1.",
                "Unterminated fractional number in JSON at position 2 (line 1 column 3)",
            ),
            (
                "1e",
                "Exponent part is missing a number in JSON at position 2 (line 1 column 3)",
            ),
            ("01", "Unexpected number in JSON at position 1 (line 1 column 2)"),
            ("tru", "Unexpected end of JSON input"),
            (
                r#"{"type":"x"} x"#,
                "Unexpected non-whitespace character after JSON at position 13 (line 1 column 14)",
            ),
            ("NaN", r#""NaN" is not valid JSON"#),
            ("undefined", r#""undefined" is not valid JSON"#),
            (
                r#""a\q""#,
                "Bad escaped character in JSON at position 3 (line 1 column 4)",
            ),
            (
                r#""\u12g4""#,
                "Bad Unicode escape in JSON at position 5 (line 1 column 6)",
            ),
            (
                "\"a\tb\"",
                "Bad control character in string literal in JSON at position 2 (line 1 column 3)",
            ),
            (
                "this is a much longer invalid line of text",
                r#"Unexpected token 'h', "this is a m"... is not valid JSON"#,
            ),
            (
                r#"{"id":"1","type":"get_state""#,
                "Expected ',' or '}' after property value in JSON at position 28 (line 1 column 29)",
            ),
            (r#"{"a":tru}"#, r#"Unexpected token '}', "{"a":tru}" is not valid JSON"#),
            (
                "[-]",
                "No number after minus sign in JSON at position 2 (line 1 column 3)",
            ),
            (
                "1 2",
                "Unexpected non-whitespace character after JSON at position 2 (line 1 column 3)",
            ),
            (r#"{"😀":x}"#, r#"Unexpected token 'x', "{"😀":x}" is not valid JSON"#),
            (
                r#"{"😀":1 x}"#,
                "Expected ',' or '}' after property value in JSON at position 8 (line 1 column 9)",
            ),
            (
                "{\r\n\"a\" 1}",
                "Expected ':' after property name in JSON at position 7 (line 2 column 5)",
            ),
            (
                "{\r\"a\" 1}",
                "Expected ':' after property name in JSON at position 6 (line 2 column 5)",
            ),
            (
                "{\n\n  \"a\":\n1 x}",
                "Expected ',' or '}' after property value in JSON at position 12 (line 4 column 3)",
            ),
        ];
        for (source, want) in cases {
            assert_eq!(parse_error_message(source), want, "source {source:?}");
        }
    }

    #[test]
    fn context_in_the_middle_and_at_the_end_of_long_sources() {
        // Checked against Node 22 as well.
        assert_eq!(
            parse_error_message(r#"{"type":"prompt","message":hello world}"#),
            r#"Unexpected token 'h', ...""message":hello worl"... is not valid JSON"#
        );
        assert_eq!(
            parse_error_message(r#"{"type":"prompt","message":"x"} ,"#),
            "Unexpected non-whitespace character after JSON at position 32 (line 1 column 33)"
        );
        assert_eq!(
            parse_error_message(r#"{"type":"prompt","message":x}"#),
            r#"Unexpected token 'x', ...""message":x}" is not valid JSON"#
        );
    }
}
