//! What each stretch of highlighted code is, sorted the way pi 1.6's highlighter (highlight.js
//! 10 through cli-highlight) sorts it: syntect's scopes find the structure (strings, comments,
//! numbers, definitions, parameters, annotations) and, for the common languages, the words
//! between are told apart by the same keyword, literal and built-in lists that highlighter
//! uses. Operators and punctuation stay plain, as there.

use syntect::parsing::ScopeStack;

use crate::highlight::CodeToken;

/// A language whose words are sorted by lists; `Other` keeps syntect's own classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Python,
    JavaScript,
    TypeScript,
    Rust,
    Bash,
    Json,
    Other,
}

impl Lang {
    /// The language of a code fence's tag (after the aliases are folded).
    pub(crate) fn of(tag: &str) -> Lang {
        match tag.trim().to_lowercase().as_str() {
            "py" | "python" | "python3" => Lang::Python,
            "js" | "javascript" | "jsx" | "mjs" | "cjs" | "node" => Lang::JavaScript,
            "ts" | "typescript" | "tsx" => Lang::TypeScript,
            "rs" | "rust" => Lang::Rust,
            "sh" | "bash" | "shell" | "zsh" | "console" => Lang::Bash,
            "json" | "jsonc" | "json5" => Lang::Json,
            _ => Lang::Other,
        }
    }

    fn words(self) -> Option<Words> {
        Some(match self {
            Lang::Python => PYTHON,
            Lang::JavaScript => JAVASCRIPT,
            Lang::TypeScript => TYPESCRIPT,
            Lang::Rust => RUST,
            Lang::Bash => BASH,
            Lang::Json | Lang::Other => return None,
        })
    }
}

/// The class a TypeScript word takes from the lists, if it is on one.
pub(crate) fn ts_word_class(word: &str) -> Option<CodeToken> {
    TYPESCRIPT.class(word)
}

struct Words {
    keyword: &'static str,
    literal: &'static str,
    built_in: &'static str,
}

impl Words {
    fn class(&self, word: &str) -> Option<CodeToken> {
        let has = |list: &str| list.split(' ').any(|w| w == word);
        if has(self.keyword) {
            Some(CodeToken::Keyword)
        } else if has(self.literal) {
            Some(CodeToken::Number)
        } else if has(self.built_in) {
            Some(CodeToken::Type)
        } else {
            None
        }
    }
}

const PYTHON: Words = Words {
    keyword: "and as assert async await break class continue def del elif else except finally for from global if \
              import in is lambda nonlocal not or pass raise return try while with yield",
    literal: "__debug__ Ellipsis False None NotImplemented True",
    // Built-in functions, then the typing names it paints the same way.
    built_in: "__import__ abs all any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile \
               complex delattr dict dir divmod enumerate eval exec filter float format frozenset getattr globals \
               hasattr hash help hex id input int isinstance issubclass iter len list locals map max memoryview \
               min next object oct open ord pow print property range repr reversed round set setattr slice \
               sorted staticmethod str sum super tuple type vars zip Any Callable Coroutine Dict List Literal \
               Generic Optional Sequence Set Tuple Type Union",
};

const JS_KEYWORDS: &str = "as in of if for while finally var new function do return void else break catch instanceof \
                           with throw case default try switch continue typeof delete let yield const class debugger \
                           async await static import from export extends";
const JS_BUILT_IN: &str = "setInterval setTimeout clearInterval clearTimeout require exports eval isFinite isNaN \
                           parseFloat parseInt decodeURI decodeURIComponent encodeURI encodeURIComponent escape \
                           unescape arguments this super console window document localStorage module global Intl \
                           DataView Number Math Date String RegExp Object Function Boolean Error Symbol Set Map \
                           WeakSet WeakMap Proxy Reflect JSON Promise Float64Array Int16Array Int32Array Int8Array \
                           Uint16Array Uint32Array Float32Array Array Uint8Array Uint8ClampedArray ArrayBuffer \
                           BigInt64Array BigUint64Array BigInt EvalError InternalError RangeError ReferenceError \
                           SyntaxError TypeError URIError";

const JAVASCRIPT: Words = Words {
    keyword: JS_KEYWORDS,
    literal: "true false null undefined NaN Infinity",
    built_in: JS_BUILT_IN,
};

const TYPESCRIPT: Words = Words {
    // `void` is painted as a type there, not as a keyword.
    keyword: "as in of if for while finally var new function do return else break catch instanceof with \
              throw case default try switch continue typeof delete let yield const class debugger async await \
              static import from export extends type namespace typedef interface public private protected \
              implements declare abstract readonly",
    literal: "true false null undefined NaN Infinity",
    built_in: "setInterval setTimeout clearInterval clearTimeout require exports eval isFinite isNaN parseFloat \
               parseInt decodeURI decodeURIComponent encodeURI encodeURIComponent escape unescape arguments this \
               super console window document localStorage module global Intl DataView Number Math Date String \
               RegExp Object Function Boolean Error Symbol Set Map WeakSet WeakMap Proxy Reflect JSON Promise \
               Float64Array Int16Array Int32Array Int8Array Uint16Array Uint32Array Float32Array Array Uint8Array \
               Uint8ClampedArray ArrayBuffer BigInt64Array BigUint64Array BigInt EvalError InternalError \
               RangeError ReferenceError SyntaxError TypeError URIError any void number boolean string object \
               never enum",
};

const RUST: Words = Words {
    keyword: "abstract as async await become box break const continue crate do dyn else enum extern false final fn \
              for if impl in let loop macro match mod move mut override priv pub ref return self Self static \
              struct super trait true try type typeof unsafe unsized use virtual where while yield",
    literal: "true false Some None Ok Err",
    built_in: "drop i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 str char bool Box Option Result \
               String Vec Copy Send Sized Sync Drop Fn FnMut FnOnce ToOwned Clone Debug PartialEq PartialOrd Eq \
               Ord AsRef AsMut Into From Default Iterator Extend IntoIterator DoubleEndedIterator \
               ExactSizeIterator SliceConcatExt ToString assert! assert_eq! bitflags! bytes! cfg! col! concat! \
               concat_idents! debug_assert! debug_assert_eq! env! panic! file! format! format_args! \
               include_bin! include_str! line! local_data_key! module_path! option_env! print! println! select! \
               stringify! try! unimplemented! unreachable! vec! write! writeln! macro_rules! assert_ne! \
               debug_assert_ne!",
};

const BASH: Words = Words {
    keyword: "if then else elif fi for while in do done case esac function",
    literal: "true false",
    built_in: "break cd continue eval exec exit export getopts hash pwd readonly return shift test times trap \
               umask unset alias bind builtin caller command declare echo enable help let local logout mapfile \
               printf read readarray source type typeset ulimit unalias set shopt autoload bg bindkey bye cap \
               chdir clone comparguments compcall compctl compdescribe compfiles compgroups compquote comptags \
               comptry compvalues dirs disable disown echotc echoti emulate fc fg float functions getcap getln \
               history integer jobs kill limit log noglob popd print pushd pushln rehash sched setcap setopt stat \
               suspend ttyctl unfunction unhash unlimit unsetopt vared wait whence where which zcompile zformat \
               zftp zle zmodload zparseopts zprof zpty zregexparse zsocket zstyle ztcp",
};

/// How a stretch is painted: all of it one way, or word by word (words on no list take the
/// given class).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Whole(CodeToken),
    Words(CodeToken),
}

/// The class of the text under `stack` in `lang`.
pub(crate) fn classify(stack: &ScopeStack, lang: Lang) -> Class {
    let names: Vec<String> = stack.as_slice().iter().map(|s| s.build_string()).collect();
    if lang == Lang::Other {
        return Class::Whole(classify_other(&names));
    }
    let is = |name: &str, prefix: &str| name == prefix || name.starts_with(&format!("{prefix}."));
    let under = |names: &[String], prefix: &str| names.iter().any(|n| is(n, prefix));
    if under(&names, "meta.annotation") {
        // A Python decorator's arguments are painted as such: strings, numbers, the rest
        // as parameters.
        if lang == Lang::Python && under(&names, "meta.annotation.arguments") {
            return Class::Whole(if under(&names, "string") {
                CodeToken::String
            } else if under(&names, "constant.numeric") || under(&names, "constant.language") {
                CodeToken::Number
            } else {
                CodeToken::Variable
            });
        }
        return Class::Whole(CodeToken::Meta);
    }
    if lang == Lang::Bash && under(&names, "meta.group.expansion.parameter") {
        return Class::Whole(CodeToken::Variable);
    }
    // Inside an interpolation (`${a}`, `{x}` in an f-string) only what is within counts.
    let inner_from = names
        .iter()
        .rposition(|n| is(n, "meta.interpolation") || is(n, "meta.template.expression") || n.contains(".embedded"))
        .map_or(0, |i| i + 1);
    let inner = &names[inner_from..];
    if inner
        .iter()
        .any(|n| n.starts_with("comment.block.documentation.python"))
    {
        return Class::Whole(CodeToken::String);
    }
    if under(inner, "comment") {
        return Class::Whole(CodeToken::Comment);
    }
    let key = [
        "meta.structure.dictionary.key",
        "meta.mapping.key",
        "meta.object-literal.key",
    ];
    if key.iter().any(|k| under(inner, k)) {
        return Class::Whole(CodeToken::Variable);
    }
    let unquoted = lang == Lang::Bash && under(inner, "string.unquoted");
    if (under(inner, "string") && !unquoted) || under(inner, "storage.type.string") {
        return Class::Whole(CodeToken::String);
    }
    // Shell numbers (`2` of `>&2`) are plain there.
    if lang != Lang::Bash && (under(inner, "constant.numeric") || under(inner, "constant.language")) {
        return Class::Whole(CodeToken::Number);
    }
    // The innermost structure other than an optional parameter's.
    let meta = inner
        .iter()
        .rev()
        .find(|n| n.starts_with("meta.") && !is(n, "meta.parameter"))
        .map(String::as_str)
        .unwrap_or("");
    for name in inner.iter().rev() {
        let is = |prefix: &str| is(name, prefix);
        if is("entity.name.function") {
            // `const f = () => …` names no function for that highlighter.
            if under(inner, "variable.other.readwrite") {
                return Class::Words(CodeToken::Plain);
            }
            return Class::Words(CodeToken::Function);
        }
        if is("entity.name.class") || is("entity.name.struct") || is("entity.name.enum") || is("entity.name.trait") {
            return Class::Words(CodeToken::Function);
        }
        if is("entity.other.inherited-class") {
            // A Python class's bases sit in its parameter list.
            let token = if lang == Lang::Python {
                CodeToken::Variable
            } else {
                CodeToken::Function
            };
            return Class::Words(token);
        }
        if is("variable.parameter") {
            // A definition's parameters; not a call's keyword arguments nor a lambda's.
            let plain =
                lang == Lang::Python && (under(inner, "meta.function-call") || under(inner, "meta.function.inline"));
            let token = match lang {
                Lang::Python | Lang::JavaScript | Lang::TypeScript if !plain => CodeToken::Variable,
                _ => CodeToken::Plain,
            };
            return Class::Words(token);
        }
        if is("storage.type.function.arrow") {
            return Class::Whole(CodeToken::Function);
        }
        let punctuation = is("punctuation") || is("keyword.operator");
        if punctuation {
            if let Some(token) = definition_punctuation(lang, name, meta, inner) {
                return Class::Whole(token);
            }
        }
    }
    Class::Words(CodeToken::Plain)
}

/// Brackets and separators of a definition line take the definition's colour, as that
/// highlighter paints a whole `def f(a, b=1):` / `function f(a, b)` / `class A(B):` span with
/// the definition's class and the parameters inside with the parameters'.
fn definition_punctuation(lang: Lang, name: &str, meta: &str, inner: &[String]) -> Option<CodeToken> {
    let in_params = |prefix: &str| inner.iter().any(|n| n.starts_with(prefix));
    match lang {
        Lang::Python => {
            if in_params("meta.function.parameters") {
                return Some(if name.starts_with("punctuation.section.parameters") {
                    CodeToken::Function
                } else {
                    CodeToken::Variable
                });
            }
            // The definition line: `def` up to its colon (its return annotation included).
            if in_params("meta.function.") && !in_params("meta.function.inline") {
                return Some(CodeToken::Function);
            }
            if in_params("meta.class") {
                return Some(CodeToken::Type);
            }
            None
        }
        Lang::JavaScript | Lang::TypeScript if meta.starts_with("meta.function.declaration") => {
            if name.starts_with("punctuation.section.group") {
                Some(CodeToken::Function)
            } else if name.starts_with("punctuation.separator.parameter")
                || (name.starts_with("keyword.operator.assignment") && in_params("meta.parameter"))
            {
                Some(CodeToken::Variable)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Languages without lists: syntect's classes, with operators and punctuation plain, calls
/// plain and built-ins as types, as that highlighter mostly paints them.
fn classify_other(names: &[String]) -> CodeToken {
    let under = |prefix: &str| {
        names
            .iter()
            .any(|n| n == prefix || n.starts_with(&format!("{prefix}.")))
    };
    if under("meta.annotation") {
        return CodeToken::Meta;
    }
    if under("comment") {
        return CodeToken::Comment;
    }
    if let Some(token) = css_class(names).or_else(|| sql_class(names)) {
        return token;
    }
    if let Some(token) = markup_class(names) {
        return token;
    }
    // A YAML key and its colon are painted as an attribute, an anchor as meta.
    if under("entity.name.tag.yaml") || under("punctuation.separator.key-value.mapping.yaml") {
        return CodeToken::Variable;
    }
    if under("meta.property.yaml") || under("entity.other.document.begin.yaml") {
        return CodeToken::Meta;
    }
    if under("keyword.control.flow.block-scalar") {
        return CodeToken::String;
    }
    if under("string") {
        return CodeToken::String;
    }
    if under("constant.numeric") || under("constant.language") {
        return CodeToken::Number;
    }
    for name in names.iter().rev() {
        let is = |prefix: &str| name == prefix || name.starts_with(&format!("{prefix}."));
        if is("keyword.operator") || is("punctuation") || is("variable.other") || is("variable.function") {
            return CodeToken::Plain;
        }
        let token = if is("keyword") || is("storage") {
            CodeToken::Keyword
        } else if is("entity.name.function") || is("entity.name.class") || is("entity.name.struct") {
            CodeToken::Function
        } else if is("support.function") || is("support.type") || is("support.class") || is("entity.name.type") {
            CodeToken::Type
        } else if is("variable.parameter") || is("entity.other.attribute-name") {
            CodeToken::Variable
        } else {
            continue;
        };
        return token;
    }
    CodeToken::Plain
}

/// CSS as that highlighter paints it: selectors and property names plain, numbers and
/// colours as numbers, at-rules as keywords, functions as built-ins, `!important` as meta.
/// None outside CSS.
fn css_class(names: &[String]) -> Option<CodeToken> {
    let css = names.iter().rposition(|n| n.starts_with("source.css"))?;
    let inner = &names[css..];
    let has = |part: &str| inner.iter().any(|n| n.starts_with(part));
    Some(if has("string") {
        CodeToken::String
    } else if has("keyword.other.important") {
        CodeToken::Meta
    } else if has("keyword.control.at-rule") {
        CodeToken::Keyword
    } else if has("constant.numeric") || has("constant.other.color") {
        CodeToken::Number
    } else if has("support.function") && !has("support.function.url") {
        CodeToken::Type
    } else {
        CodeToken::Plain
    })
}

/// SQL comparison operators as operators and a created table's name plain, as that
/// highlighter paints them. None for the rest (and outside SQL).
fn sql_class(names: &[String]) -> Option<CodeToken> {
    if names.first().is_none_or(|n| n != "source.sql") {
        return None;
    }
    let has = |part: &str| names.iter().any(|n| n.starts_with(part));
    if has("keyword.operator.comparison") {
        Some(CodeToken::Operator)
    } else if has("entity.name.function") {
        Some(CodeToken::Plain)
    } else {
        None
    }
}

/// HTML and XML tags as that highlighter paints them: the brackets and everything else in a
/// tag as punctuation, the tag's name as a name (a keyword's colour), attributes, their values
/// as strings, `<!DOCTYPE …>` and `<?xml …?>` as meta. None outside a tag (scripts and styles
/// embedded in a page are their own language's).
fn markup_class(names: &[String]) -> Option<CodeToken> {
    let inner_from = names.iter().rposition(|n| n.contains(".embedded")).map_or(0, |i| i + 1);
    let inner = &names[inner_from..];
    let has = |part: &str| inner.iter().any(|n| n.starts_with(part));
    if !has("meta.tag") {
        return None;
    }
    Some(if has("meta.tag.sgml") || has("meta.tag.preprocessor") {
        CodeToken::Meta
    } else if has("string") {
        CodeToken::String
    } else if has("entity.other.attribute-name") {
        CodeToken::Variable
    } else if has("entity.name.tag") {
        CodeToken::Keyword
    } else {
        CodeToken::Punctuation
    })
}

/// Paint `text` of class `class` in `lang`: word by word when the class says so.
pub(crate) fn paint_words(text: &str, class: Class, lang: Lang, paint: &dyn Fn(CodeToken, &str) -> String) -> String {
    let fallback = match class {
        Class::Whole(token) => return paint(token, text),
        Class::Words(token) => token,
    };
    let Some(words) = lang.words() else {
        return paint(fallback, text);
    };
    let word_char = |c: char| c.is_alphanumeric() || c == '_' || (c == '$' && lang != Lang::Bash);
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        let start = rest.find(word_char).unwrap_or(rest.len());
        if start > 0 {
            out.push_str(&paint(fallback, &rest[..start]));
            rest = &rest[start..];
            continue;
        }
        let mut end = rest.find(|c: char| !word_char(c)).unwrap_or(rest.len());
        // Rust macros are listed with their `!`.
        if lang == Lang::Rust && rest[end..].starts_with('!') {
            let with_bang = &rest[..end + 1];
            if words.class(with_bang).is_some() {
                end += 1;
            }
        }
        let word = &rest[..end];
        out.push_str(&paint(words.class(word).unwrap_or(fallback), word));
        rest = &rest[end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::highlight::{highlight_with, CodeToken};

    /// Each line as runs of one class, blanks left out: `<Keyword:def><Function:f(>`.
    fn runs(code: &str, lang: &str) -> Vec<String> {
        let mark = |t: CodeToken, s: &str| s.chars().map(|c| format!("\u{1}{t:?}\u{2}{c}")).collect::<String>();
        let lines = highlight_with(code, lang, &mark).expect("a known language");
        lines
            .iter()
            .map(|line| {
                let mut runs: Vec<(String, String)> = Vec::new();
                for part in line.split('\u{1}').filter(|p| !p.is_empty()) {
                    let Some((class, ch)) = part.split_once('\u{2}') else {
                        continue;
                    };
                    if ch.trim().is_empty() {
                        continue;
                    }
                    match runs.last_mut() {
                        Some((c, t)) if c == class => t.push_str(ch),
                        _ => runs.push((class.to_string(), ch.to_string())),
                    }
                }
                runs.iter().map(|(c, t)| format!("<{c}:{t}>")).collect()
            })
            .filter(|l: &String| !l.is_empty())
            .collect()
    }

    /// The classes pi 1.6's highlighter gives these snippets (keywords, built-ins, literals,
    /// definitions and their parameters, decorators, interpolations, keys).
    #[test]
    fn snippets_get_the_classes_pi_16_gives_them() {
        let cases: &[(&str, &str, &[&str])] = &[
        (
            "python",
            r#"import os
from typing import List

@dataclass
class Foo(Base):
    """Doc string."""
    count: int = 0

    def bar(self, x, y=2) -> List[int]:
        # comment here
        total = len(x) + y * 3.5
        print(f"total {total}", True, None)
        return [i for i in range(10) if i % 2 == 0]"#,
            &[
                "<Keyword:import><Plain:os>",
                "<Keyword:from><Plain:typing><Keyword:import><Type:List>",
                "<Meta:@dataclass>",
                "<Keyword:class><Function:Foo><Type:(><Variable:Base><Type:):>",
                "<String:\"\"\"Docstring.\"\"\">",
                "<Plain:count:><Type:int><Plain:=><Number:0>",
                "<Keyword:def><Function:bar(><Variable:self,x,y=><Number:2><Function:)->><Type:List><Function:[><Type:int><Function:]:>",
                "<Comment:#commenthere>",
                "<Plain:total=><Type:len><Plain:(x)+y*><Number:3.5>",
                "<Type:print><Plain:(><String:f\"total><Plain:{total}><String:\"><Plain:,><Number:True><Plain:,><Number:None><Plain:)>",
                "<Keyword:return><Plain:[i><Keyword:for><Plain:i><Keyword:in><Type:range><Plain:(><Number:10><Plain:)><Keyword:if><Plain:i%><Number:2><Plain:==><Number:0><Plain:]>",
            ],
        ),
        (
            "python",
            r#"@app.route("/x", methods=["GET"])
async def handler(req, *args, **kwargs):
    data = {"a": 0x1F, 'b': [1, 2]}
    fn = lambda v: v + 1
    if data and not args:
        raise ValueError("bad\n")
    return sorted(data.items(), key=lambda kv: kv[0])

class Plain:
    pass"#,
            &[
                "<Meta:@app.route(><String:\"/x\"><Variable:,methods=[><String:\"GET\"><Variable:]><Meta:)>",
                "<Keyword:asyncdef><Function:handler(><Variable:req,*args,**kwargs><Function:):>",
                "<Plain:data={><String:\"a\"><Plain::><Number:0x1F><Plain:,><String:'b'><Plain::[><Number:1><Plain:,><Number:2><Plain:]}>",
                "<Plain:fn=><Keyword:lambda><Plain:v:v+><Number:1>",
                "<Keyword:if><Plain:data><Keyword:andnot><Plain:args:>",
                "<Keyword:raise><Plain:ValueError(><String:\"bad\\n\"><Plain:)>",
                "<Keyword:return><Type:sorted><Plain:(data.items(),key=><Keyword:lambda><Plain:kv:kv[><Number:0><Plain:])>",
                "<Keyword:class><Function:Plain><Type::>",
                "<Keyword:pass>",
            ],
        ),
        (
            "js",
            r#"import fs from "fs";
// comment
const re = /ab+c/g;
class Foo extends Bar {
  constructor(a, b = 2) {
    super(a);
    this.x = `t ${a}`;
  }
  async run() { return await fetch(url).then((r) => r.json()); }
}
function add(x, y) { console.log(x + y, true, null, undefined); return Math.max(x, 1.5e3); }
export const f = (n) => n * 2;"#,
            &[
                "<Keyword:import><Plain:fs><Keyword:from><String:\"fs\"><Plain:;>",
                "<Comment://comment>",
                "<Keyword:const><Plain:re=><String:/ab+c/g><Plain:;>",
                "<Keyword:class><Function:Foo><Keyword:extends><Function:Bar><Plain:{>",
                "<Function:constructor(><Variable:a,b=><Number:2><Function:)><Plain:{>",
                "<Type:super><Plain:(a);>",
                "<Type:this><Plain:.x=><String:`t><Plain:${a}><String:`><Plain:;>",
                "<Plain:}>",
                "<Keyword:async><Function:run()><Plain:{><Keyword:returnawait><Plain:fetch(url).then(><Function:(><Variable:r><Function:)=>><Plain:r.json());}>",
                "<Plain:}>",
                "<Keyword:function><Function:add(><Variable:x,y><Function:)><Plain:{><Type:console><Plain:.log(x+y,><Number:true><Plain:,><Number:null><Plain:,><Number:undefined><Plain:);><Keyword:return><Type:Math><Plain:.max(x,><Number:1.5e3><Plain:);}>",
                "<Keyword:exportconst><Plain:f=><Function:(><Variable:n><Function:)=>><Plain:n*><Number:2><Plain:;>",
            ],
        ),
        (
            "js",
            r#"const obj = { a: 1, b: "two", c: [3, 4], fn() { return this.a; } };
let total = items.reduce((acc, x) => acc + x.price, 0);
if (typeof total === "number" && !isNaN(total)) { throw new Error(`bad ${total}`); }
async function main() { await Promise.all([load(), save()]); }"#,
            &[
                "<Keyword:const><Plain:obj={><Variable:a><Plain::><Number:1><Plain:,><Variable:b><Plain::><String:\"two\"><Plain:,><Variable:c><Plain::[><Number:3><Plain:,><Number:4><Plain:],><Function:fn()><Plain:{><Keyword:return><Type:this><Plain:.a;}};>",
                "<Keyword:let><Plain:total=items.reduce(><Function:(><Variable:acc,x><Function:)=>><Plain:acc+x.price,><Number:0><Plain:);>",
                "<Keyword:if><Plain:(><Keyword:typeof><Plain:total===><String:\"number\"><Plain:&&!><Type:isNaN><Plain:(total)){><Keyword:thrownew><Type:Error><Plain:(><String:`bad><Plain:${total}><String:`><Plain:);}>",
                "<Keyword:asyncfunction><Function:main()><Plain:{><Keyword:await><Type:Promise><Plain:.all([load(),save()]);}>",
            ],
        ),
        (
            "rust",
            r#"use std::collections::HashMap;
/// Doc comment
#[derive(Debug, Clone)]
pub struct Foo<'a> { name: &'a str, n: u32 }
impl Foo<'_> {
    pub fn new(n: u32) -> Self {
        let mut m = HashMap::new();
        m.insert("k", 1.5);
        println!("{} {}", n, true);
        Some(n).unwrap_or(0);
        Foo { name: "x", n }
    }
}"#,
            &[
                "<Keyword:use><Plain:std::collections::HashMap;>",
                "<Comment:///Doccomment>",
                "<Meta:#[derive(Debug,Clone)]>",
                "<Keyword:pubstruct><Function:Foo><Plain:<'a>{name:&'a><Type:str><Plain:,n:><Type:u32><Plain:}>",
                "<Keyword:impl><Plain:Foo<'_>{>",
                "<Keyword:pubfn><Function:new><Plain:(n:><Type:u32><Plain:)->><Keyword:Self><Plain:{>",
                "<Keyword:letmut><Plain:m=HashMap::new();>",
                "<Plain:m.insert(><String:\"k\"><Plain:,><Number:1.5><Plain:);>",
                "<Type:println!><Plain:(><String:\"{}{}\"><Plain:,n,><Number:true><Plain:);>",
                "<Number:Some><Plain:(n).unwrap_or(><Number:0><Plain:);>",
                "<Plain:Foo{name:><String:\"x\"><Plain:,n}>",
                "<Plain:}>",
                "<Plain:}>",
            ],
        ),
        (
            "rust",
            r#"enum Shape { Circle(f64), Square { side: f64 } }
fn area(s: &Shape) -> f64 {
    match s {
        Shape::Circle(r) => 3.14 * r * r,
        Shape::Square { side } => side * side,
    }
}
let v: Vec<i32> = (0..10).map(|x| x * 2).collect();"#,
            &[
                "<Keyword:enum><Function:Shape><Plain:{Circle(><Type:f64><Plain:),Square{side:><Type:f64><Plain:}}>",
                "<Keyword:fn><Function:area><Plain:(s:&Shape)->><Type:f64><Plain:{>",
                "<Keyword:match><Plain:s{>",
                "<Plain:Shape::Circle(r)=>><Number:3.14><Plain:*r*r,>",
                "<Plain:Shape::Square{side}=>side*side,>",
                "<Plain:}>",
                "<Plain:}>",
                "<Keyword:let><Plain:v:><Type:Vec><Plain:<><Type:i32><Plain:>=(><Number:0><Plain:..><Number:10><Plain:).map(|x|x*><Number:2><Plain:).collect();>",
            ],
        ),
        (
            "bash",
            r#"#!/bin/bash
# comment
for f in *.txt; do
  echo "file: $f" | grep -v foo > /dev/null
  if [ -n "$VAR" ]; then export X=1; fi
done
ls -la ${HOME}/dir && cd /tmp"#,
            &[
                "<Meta:#!/bin/bash>",
                "<Comment:#comment>",
                "<Keyword:for><Plain:f><Keyword:in><Plain:*.txt;><Keyword:do>",
                "<Type:echo><String:\"file:><Variable:$f><String:\"><Plain:|grep-vfoo>/dev/null>",
                "<Keyword:if><Plain:[-n><String:\"><Variable:$VAR><String:\"><Plain:];><Keyword:then><Type:export><Plain:X=1;><Keyword:fi>",
                "<Keyword:done>",
                "<Plain:ls-la><Variable:${HOME}><Plain:/dir&&><Type:cd><Plain:/tmp>",
            ],
        ),
        (
            "bash",
            r#"build() {
  local out=$(git rev-parse HEAD)
  echo "built ${out:0:7}" >&2
  return 0
}
case "$1" in
  start) build ;;
  *) exit 1 ;;
esac"#,
            &[
                "<Function:build><Plain:(){>",
                "<Type:local><Plain:out=$(gitrev-parseHEAD)>",
                "<Type:echo><String:\"built><Variable:${out:0:7}><String:\"><Plain:>&2>",
                "<Type:return><Plain:0>",
                "<Plain:}>",
                "<Keyword:case><String:\"><Variable:$1><String:\"><Keyword:in>",
                "<Plain:start)build;;>",
                "<Plain:*)><Type:exit><Plain:1;;>",
                "<Keyword:esac>",
            ],
        ),
        (
            "json",
            r#"{"name": "x", "n": 1.5, "ok": true, "none": null, "list": [1, "a"], "obj": {"k": false}}"#,
            &[
                "<Plain:{><Variable:\"name\"><Plain::><String:\"x\"><Plain:,><Variable:\"n\"><Plain::><Number:1.5><Plain:,><Variable:\"ok\"><Plain::><Number:true><Plain:,><Variable:\"none\"><Plain::><Number:null><Plain:,><Variable:\"list\"><Plain::[><Number:1><Plain:,><String:\"a\"><Plain:],><Variable:\"obj\"><Plain::{><Variable:\"k\"><Plain::><Number:false><Plain:}}>",
            ],
        ),
        ];
        for (lang, code, want) in cases {
            assert_eq!(runs(code, lang), *want, "{lang}:\n{code}");
        }
    }

    /// TypeScript as pi 1.6 paints it (its `ts`, `tsx` and `typescript` fences): definition
    /// heads with typed parameters, return types and type parameters, class heads, methods,
    /// arrows, decorators, and the type names on the built-in list.
    #[test]
    fn typescript_gets_the_classes_pi_16_gives_it() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "ts",
                r#"import { readFile } from "fs/promises";
interface User { id: number; name?: string; readonly tags: string[] }
type Id = string | number;
enum Color { Red = 1, Green }
function f(p: T, q: number = 2): number {
  return p.length + q;
}
const g = async (x: string): Promise<void> => { await h(x); };
export class Box<T> extends Base implements I {
  private value: T;
  constructor(public name: string, v: T) { super(); this.value = v; }
  get(): T { return this.value; }
}
@Component({ selector: "app" })
class App {}
let xs: Array<number> = [1, 2, 3];
declare module "m" { export function k(a: any): never; }"#,
                &[
                    r#"<Keyword:import><Plain:{readFile}><Keyword:from><String:"fs/promises"><Plain:;>"#,
                    r#"<Keyword:interface><Plain:User{id:><Type:number><Plain:;name?:><Type:string><Plain:;><Keyword:readonly><Plain:tags:><Type:string><Plain:[]}>"#,
                    r#"<Keyword:type><Plain:Id=><Type:string><Plain:|><Type:number><Plain:;>"#,
                    r#"<Type:enum><Plain:Color{Red=><Number:1><Plain:,Green}>"#,
                    r#"<Keyword:function><Function:f(><Variable:p:T,q:><Type:number><Variable:=><Number:2><Function:):number><Plain:{>"#,
                    r#"<Keyword:return><Plain:p.length+q;>"#,
                    r#"<Plain:}>"#,
                    r#"<Keyword:const><Plain:g=><Keyword:async><Plain:(x:><Type:string><Plain:):><Type:Promise><Plain:<><Type:void><Plain:>=>{><Keyword:await><Plain:h(x);};>"#,
                    r#"<Keyword:exportclass><Function:Box><Type:<><Function:T><Type:>><Keyword:extends><Function:BaseimplementsI><Plain:{>"#,
                    r#"<Keyword:private><Plain:value:T;>"#,
                    r#"<Function:constructor(><Keyword:public><Variable:name:><Type:string><Variable:,v:T><Function:)><Plain:{><Type:super><Plain:();><Type:this><Plain:.value=v;}>"#,
                    r#"<Plain:get():T{><Keyword:return><Type:this><Plain:.value;}>"#,
                    r#"<Plain:}>"#,
                    r#"<Meta:@Component><Plain:({><Variable:selector><Plain::><String:"app"><Plain:})>"#,
                    r#"<Keyword:class><Function:App><Plain:{}>"#,
                    r#"<Keyword:let><Plain:xs:><Type:Array><Plain:<><Type:number><Plain:>=[><Number:1><Plain:,><Number:2><Plain:,><Number:3><Plain:];>"#,
                    r#"<Keyword:declare><Type:module><String:"m"><Plain:{><Keyword:exportfunction><Function:k(><Variable:a:><Type:any><Function:):never><Plain:;}>"#,
                ],
            ),
            (
                "typescript",
                r#"export default function useThing<T extends object>(init: T, opts?: Options): [T, (v: T) => void] {
  const [s, set] = useState<T>(init);
  return [s, set];
}
namespace NS { export const a = 1 as const; }
abstract class Shape { abstract area(): number; }
const o = { a: 1, b: (n: number) => n * 2 };
if (typeof x === "string" && x instanceof Foo) { throw new Error(`bad ${x}`); }
function assertIsDefined<T>(val: T): asserts val is NonNullable<T> {}"#,
                &[
                    r#"<Keyword:exportdefaultfunction><Function:useThing<Textendsobject>(><Variable:init:T,opts?:Options><Function:):[T,(><Variable:v:T><Function:)=>void]><Plain:{>"#,
                    r#"<Keyword:const><Plain:[s,set]=useState<T>(init);>"#,
                    r#"<Keyword:return><Plain:[s,set];>"#,
                    r#"<Plain:}>"#,
                    r#"<Keyword:namespace><Plain:NS{><Keyword:exportconst><Plain:a=><Number:1><Keyword:asconst><Plain:;}>"#,
                    r#"<Keyword:abstractclass><Function:Shape><Plain:{><Keyword:abstract><Plain:area():><Type:number><Plain:;}>"#,
                    r#"<Keyword:const><Plain:o={><Variable:a><Plain::><Number:1><Plain:,><Variable:b><Plain::><Function:(><Variable:n:><Type:number><Function:)=>><Plain:n*><Number:2><Plain:};>"#,
                    r#"<Keyword:if><Plain:(><Keyword:typeof><Plain:x===><String:"string"><Plain:&&x><Keyword:instanceof><Plain:Foo){><Keyword:thrownew><Type:Error><Plain:(><String:`bad><Plain:${x}><String:`><Plain:);}>"#,
                    r#"<Keyword:function><Function:assertIsDefined<T>(><Variable:val:T><Function:):assertsvalisNonNullable<T>><Plain:{}>"#,
                ],
            ),
            (
                "tsx",
                r#"const double = x => x * 2;
export type Handler = (req: Request, res: Response) => Promise<void>;
interface Repo<T> extends Base<T> {
  find(id: string): Promise<T | undefined>;
  save(item: T): void;
}
type Keys = keyof typeof obj;
const v = obj?.a ?? (b as unknown as string);
for (const [k, v] of Object.entries(map)) { console.log(k, v); }
export async function load(path: string, { force = false }: Opts = {}): Promise<Buffer> {
  try { return await readFile(path); } catch (e: unknown) { throw e; }
}
items.map((item, i) => ({ ...item, index: i })).filter(Boolean);
class Store {
  static instance?: Store;
  @observable count = 0;
  increment = (by: number = 1): void => { this.count += by; };
  async fetch(url: string) {
    const res = await fetch(url, { method: "GET" });
  }
}
let u: string | null = null; // note
/* block */ const re = /a+b/gi;"#,
                &[
                    r#"<Keyword:const><Plain:double=><Variable:x><Function:=>><Plain:x*><Number:2><Plain:;>"#,
                    r#"<Keyword:exporttype><Plain:Handler=><Function:(><Variable:req:Request,res:Response><Function:)=>><Type:Promise><Plain:<><Type:void><Plain:>;>"#,
                    r#"<Keyword:interface><Plain:Repo<T>><Keyword:extends><Plain:Base<T>{>"#,
                    r#"<Plain:find(id:><Type:string><Plain:):><Type:Promise><Plain:<T|><Number:undefined><Plain:>;>"#,
                    r#"<Plain:save(item:T):><Type:void><Plain:;>"#,
                    r#"<Plain:}>"#,
                    r#"<Keyword:type><Plain:Keys=keyof><Keyword:typeof><Plain:obj;>"#,
                    r#"<Keyword:const><Plain:v=obj?.a??(b><Keyword:as><Plain:unknown><Keyword:as><Type:string><Plain:);>"#,
                    r#"<Keyword:for><Plain:(><Keyword:const><Plain:[k,v]><Keyword:of><Type:Object><Plain:.entries(map)){><Type:console><Plain:.log(k,v);}>"#,
                    r#"<Keyword:exportasyncfunction><Function:load(><Variable:path:><Type:string><Variable:,{force=><Number:false><Variable:}:Opts={}><Function:):Promise<Buffer>><Plain:{>"#,
                    r#"<Keyword:try><Plain:{><Keyword:returnawait><Plain:readFile(path);}><Keyword:catch><Plain:(e:unknown){><Keyword:throw><Plain:e;}>"#,
                    r#"<Plain:}>"#,
                    r#"<Plain:items.map(><Function:(><Variable:item,i><Function:)=>><Plain:({...item,><Variable:index><Plain::i})).filter(><Type:Boolean><Plain:);>"#,
                    r#"<Keyword:class><Function:Store><Plain:{>"#,
                    r#"<Keyword:static><Plain:instance?:Store;>"#,
                    r#"<Meta:@observable><Plain:count=><Number:0><Plain:;>"#,
                    r#"<Plain:increment=(by:><Type:number><Plain:=><Number:1><Plain:):><Variable:void><Function:=>><Plain:{><Type:this><Plain:.count+=by;};>"#,
                    r#"<Keyword:async><Function:fetch(><Variable:url:><Type:string><Function:)><Plain:{>"#,
                    r#"<Keyword:const><Plain:res=><Keyword:await><Plain:fetch(url,{><Variable:method><Plain::><String:"GET"><Plain:});>"#,
                    r#"<Plain:}>"#,
                    r#"<Plain:}>"#,
                    r#"<Keyword:let><Plain:u:><Type:string><Plain:|><Number:null><Plain:=><Number:null><Plain:;><Comment://note>"#,
                    r#"<Comment:/*block*/><Keyword:const><Plain:re=><String:/a+b/gi><Plain:;>"#,
                ],
            ),
        ];
        for (lang, code, want) in cases {
            assert_eq!(runs(code, lang), *want, "{lang}:\n{code}");
        }
    }

    /// Diffs, TOML/INI, YAML and HTML/XML as pi 1.6 paints them: hunk headers and file
    /// headers, added and removed lines; keys, values and comments; tags, names and attributes.
    #[test]
    fn data_and_markup_get_the_classes_pi_16_gives_them() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "diff",
                r#"diff --git a/x b/x
--- a/x
+++ b/x
@@ -1,3 +1,3 @@
 context
-old line
+new line"#,
                &[
                    r#"<Comment:diff--gita/xb/x>"#,
                    r#"<Comment:---a/x>"#,
                    r#"<Comment:+++b/x>"#,
                    r#"<Meta:@@-1,3+1,3@@>"#,
                    r#"<Plain:context>"#,
                    r#"<Removed:-oldline>"#,
                    r#"<Added:+newline>"#,
                ],
            ),
            (
                "patch",
                r#"Index: src/a.rs
===================================================================
--- src/a.rs	(revision 1)
+++ src/a.rs	(working copy)
@@ -10,7 +10,8 @@ fn main() {
 keep
-    let x = 1;
+    let x = 2;
! changed
@@ -1 +1 @@"#,
                &[
                    r#"<Comment:Index:src/a.rs>"#,
                    r#"<Comment:===================================================================>"#,
                    r#"<Comment:---src/a.rs(revision1)>"#,
                    r#"<Comment:+++src/a.rs(workingcopy)>"#,
                    r#"<Meta:@@-10,7+10,8@@><Plain:fnmain(){>"#,
                    r#"<Plain:keep>"#,
                    r#"<Removed:-letx=1;>"#,
                    r#"<Added:+letx=2;>"#,
                    r#"<Added:!changed>"#,
                    r#"<Plain:@@-1+1@@>"#,
                ],
            ),
            (
                "toml",
                r#"# comment
[package]
name = "pi"
version = "1.6.0"
edition = 2021
enabled = true
[dependencies.serde]
features = ["derive"]"#,
                &[
                    r#"<Comment:#comment>"#,
                    r#"<Plain:[package]>"#,
                    r#"<Variable:name><Plain:=><String:"pi">"#,
                    r#"<Variable:version><Plain:=><String:"1.6.0">"#,
                    r#"<Variable:edition><Plain:=><Number:2021>"#,
                    r#"<Variable:enabled><Plain:=><Number:true>"#,
                    r#"<Plain:[dependencies.serde]>"#,
                    r#"<Variable:features><Plain:=[><String:"derive"><Plain:]>"#,
                ],
            ),
            (
                "ini",
                r#"[[bin]]
name = "pi" # the binary
count = 1_000
ratio = -0.5
arr = [1, "b", true, 'c']
a.b = 'x'
"quoted key" = no
date = 1979-05-27T07:32:00Z
flag=off"#,
                &[
                    r#"<Plain:[[bin]]>"#,
                    r#"<Variable:name><Plain:=><String:"pi"><Comment:#thebinary>"#,
                    r#"<Variable:count><Plain:=><Number:1_000>"#,
                    r#"<Variable:ratio><Plain:=-><Number:0.5>"#,
                    r#"<Variable:arr><Plain:=[><Number:1><Plain:,><String:"b"><Plain:,><Number:true><Plain:,><String:'c'><Plain:]>"#,
                    r#"<Variable:a.b><Plain:=><String:'x'>"#,
                    r#"<Variable:"quotedkey"><Plain:=><Number:no>"#,
                    r#"<Variable:date><Plain:=><Number:1979><Plain:-><Number:05><Plain:-><Number:27><Plain:T07:><Number:32><Plain::><Number:00><Plain:Z>"#,
                    r#"<Variable:flag><Plain:=><Number:off>"#,
                ],
            ),
            (
                "yaml",
                r#"# comment
name: pi
version: 1.6
enabled: true
list:
  - one
  - "two"
  - 3
nested:
  key: value # trailing
anchors: &a
  x: null"#,
                &[
                    r#"<Comment:#comment>"#,
                    r#"<Variable:name:><String:pi>"#,
                    r#"<Variable:version:><Number:1.6>"#,
                    r#"<Variable:enabled:><Number:true>"#,
                    r#"<Variable:list:>"#,
                    r#"<Plain:-><String:one>"#,
                    r#"<Plain:-><String:"two">"#,
                    r#"<Plain:-><Number:3>"#,
                    r#"<Variable:nested:>"#,
                    r#"<Variable:key:><String:value><Comment:#trailing>"#,
                    r#"<Variable:anchors:><Meta:&a>"#,
                    r#"<Variable:x:><Number:null>"#,
                ],
            ),
            (
                "yml",
                r#"---
services:
  - name: web
    image: "nginx:1.25"
    ports: [80, 443]
    env: {A: 1, B: two}
    script: |
      echo hi"#,
                &[
                    r#"<Meta:--->"#,
                    r#"<Variable:services:>"#,
                    r#"<Plain:-><Variable:name:><String:web>"#,
                    r#"<Variable:image:><String:"nginx:1.25">"#,
                    r#"<Variable:ports:><Plain:[><Number:80><Plain:,><Number:443><Plain:]>"#,
                    r#"<Variable:env:><Plain:{><Variable:A:><Number:1><Plain:,><Variable:B:><String:two><Plain:}>"#,
                    r#"<Variable:script:><String:|>"#,
                    r#"<String:echohi>"#,
                ],
            ),
            (
                "html",
                r#"<!DOCTYPE html>
<html lang="en">
<!-- comment -->
<div class="a" id='b'>Hello &amp; bye</div>
<script>const x = 1;</script>
</html>"#,
                &[
                    r#"<Meta:<!DOCTYPEhtml>>"#,
                    r#"<Punctuation:<><Keyword:html><Variable:lang><Punctuation:=><String:"en"><Punctuation:>>"#,
                    r#"<Comment:<!--comment-->>"#,
                    r#"<Punctuation:<><Keyword:div><Variable:class><Punctuation:=><String:"a"><Variable:id><Punctuation:=><String:'b'><Punctuation:>><Plain:Hello&amp;bye><Punctuation:</><Keyword:div><Punctuation:>>"#,
                    r#"<Punctuation:<><Keyword:script><Punctuation:>><Keyword:const><Plain:x=><Number:1><Plain:;><Punctuation:</><Keyword:script><Punctuation:>>"#,
                    r#"<Punctuation:</><Keyword:html><Punctuation:>>"#,
                ],
            ),
            (
                "xml",
                r#"<?xml version="1.0" encoding="UTF-8"?>
<root attr="v">
  <!-- c -->
  <item id="1">text</item>
  <empty/>
</root>"#,
                &[
                    r#"<Meta:<?xmlversion="1.0"encoding="UTF-8"?>>"#,
                    r#"<Punctuation:<><Keyword:root><Variable:attr><Punctuation:=><String:"v"><Punctuation:>>"#,
                    r#"<Comment:<!--c-->>"#,
                    r#"<Punctuation:<><Keyword:item><Variable:id><Punctuation:=><String:"1"><Punctuation:>><Plain:text><Punctuation:</><Keyword:item><Punctuation:>>"#,
                    r#"<Punctuation:<><Keyword:empty><Punctuation:/>>"#,
                    r#"<Punctuation:</><Keyword:root><Punctuation:>>"#,
                ],
            ),
        ];
        for (lang, code, want) in cases {
            assert_eq!(runs(code, lang), *want, "{lang}:\n{code}");
        }
    }

    /// Go as pi 1.6 paints it: `func` heads with their receiver, parameter and result lists,
    /// and words by that highlighter's lists (`error` and type names plain).
    #[test]
    fn go_gets_the_classes_pi_16_gives_it() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "go",
                r#"package main

import "fmt"

// Add adds.
func Add(a int, b int) (int, error) {
	s := []string{"x"}
	if a > 0 && b != nil {
		return a + b, nil
	}
	fmt.Println("hi", true, 3.5)
	return 0, fmt.Errorf("bad %d", a)
}
type Point struct { X, Y float64 }
func (p *Point) Len() float64 { return p.X }"#,
                &[
                    r#"<Keyword:package><Plain:main>"#,
                    r#"<Keyword:import><String:"fmt">"#,
                    r#"<Comment://Addadds.>"#,
                    r#"<Keyword:func><Function:Add><Variable:(a><Keyword:int><Variable:,b><Keyword:int><Variable:)(><Keyword:int><Variable:,error)><Plain:{>"#,
                    r#"<Plain:s:=[]><Keyword:string><Plain:{><String:"x"><Plain:}>"#,
                    r#"<Keyword:if><Plain:a>><Number:0><Plain:&&b!=><Number:nil><Plain:{>"#,
                    r#"<Keyword:return><Plain:a+b,><Number:nil>"#,
                    r#"<Plain:}>"#,
                    r#"<Plain:fmt.Println(><String:"hi"><Plain:,><Number:true><Plain:,><Number:3.5><Plain:)>"#,
                    r#"<Keyword:return><Number:0><Plain:,fmt.Errorf(><String:"bad%d"><Plain:,a)>"#,
                    r#"<Plain:}>"#,
                    r#"<Keyword:type><Plain:Point><Keyword:struct><Plain:{X,Y><Keyword:float64><Plain:}>"#,
                    r#"<Keyword:func><Variable:(p*Point)><Function:Len><Variable:()><Function:float64><Plain:{><Keyword:return><Plain:p.X}>"#,
                ],
            ),
            (
                "golang",
                r#"var err error = nil
x := make(map[string]int, 10)
go func(ch chan<- int) { ch <- len(x) }(c)
const Pi = 3.14 // pi
type Reader interface { Read(p []byte) (n int, err error) }
defer wg.Done()
s := fmt.Sprintf(`raw %s`, "q")"#,
                &[
                    r#"<Keyword:var><Plain:errerror=><Number:nil>"#,
                    r#"<Plain:x:=><Type:make><Plain:(><Keyword:map><Plain:[><Keyword:string><Plain:]><Keyword:int><Plain:,><Number:10><Plain:)>"#,
                    r#"<Keyword:gofunc><Variable:(ch><Keyword:chan><Variable:<-><Keyword:int><Variable:)><Plain:{ch<-><Type:len><Plain:(x)}(c)>"#,
                    r#"<Keyword:const><Plain:Pi=><Number:3.14><Comment://pi>"#,
                    r#"<Keyword:type><Plain:Reader><Keyword:interface><Plain:{Read(p[]><Keyword:byte><Plain:)(n><Keyword:int><Plain:,errerror)}>"#,
                    r#"<Keyword:defer><Plain:wg.Done()>"#,
                    r#"<Plain:s:=fmt.Sprintf(><String:`raw%s`><Plain:,><String:"q"><Plain:)>"#,
                ],
            ),
        ];
        for (lang, code, want) in cases {
            assert_eq!(runs(code, lang), *want, "{lang}:\n{code}");
        }
    }

    /// Java as pi 1.6 paints it: words by its keyword list (types plain), class heads, and
    /// method heads with their parameters (not calls after `new` or `return`).
    #[test]
    fn java_gets_the_classes_pi_16_gives_it() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "java",
                r#"package com.example;
import java.util.List;
@Override
public class Foo extends Bar implements Baz {
    private final int count = 0;
    public static void main(String[] args) throws Exception {
        List<String> xs = new ArrayList<>();
        System.out.println("hi " + args.length + true);
        return null;
    }
}"#,
                &[
                    r#"<Keyword:package><Plain:com.example;>"#,
                    r#"<Keyword:import><Plain:java.util.List;>"#,
                    r#"<Meta:@Override>"#,
                    r#"<Keyword:publicclass><Function:Foo><Keyword:extends><Function:Bar><Keyword:implements><Function:Baz><Plain:{>"#,
                    r#"<Keyword:privatefinalint><Plain:count=><Number:0><Plain:;>"#,
                    r#"<Keyword:publicstaticvoid><Function:main><Variable:(String[]args)><Keyword:throws><Function:Exception><Plain:{>"#,
                    r#"<Plain:List<String>xs=><Keyword:new><Plain:ArrayList<>();>"#,
                    r#"<Plain:System.out.println(><String:"hi"><Plain:+args.length+><Keyword:true><Plain:);>"#,
                    r#"<Keyword:returnnull><Plain:;>"#,
                    r#"<Plain:}>"#,
                    r#"<Plain:}>"#,
                ],
            ),
            (
                "java",
                r#"public interface Shape extends Comparable<Shape> { double area(); }
enum Color { RED, GREEN }
@FunctionalInterface
public abstract class Base<T> {
    protected abstract T make(int n, String s);
    public List<String> names(Map<String, Integer> m) { return new ArrayList<>(m.keySet()); }
    if (x != null && x instanceof Foo) { throw new IllegalStateException("bad " + x); }
    int[] xs = {1, 2, 3}; // note
    char c = 'a'; long big = 10L; double d = 1.5e3;
    for (int i = 0; i < 10; i++) { sum += i; }
}"#,
                &[
                    r#"<Keyword:publicinterface><Function:Shape><Keyword:extends><Function:Comparable><Type:<><Function:Shape><Type:>><Plain:{><Keyword:double><Function:area><Variable:()><Plain:;}>"#,
                    r#"<Keyword:enum><Function:Color><Plain:{RED,GREEN}>"#,
                    r#"<Meta:@FunctionalInterface>"#,
                    r#"<Keyword:publicabstractclass><Function:Base><Type:<><Function:T><Type:>><Plain:{>"#,
                    r#"<Keyword:protectedabstract><Function:Tmake><Variable:(><Keyword:int><Variable:n,Strings)><Plain:;>"#,
                    r#"<Keyword:public><Function:List<String>names><Variable:(Map<String,Integer>m)><Plain:{><Keyword:returnnew><Plain:ArrayList<>(m.keySet());}>"#,
                    r#"<Keyword:if><Plain:(x!=><Keyword:null><Plain:&&x><Keyword:instanceof><Plain:Foo){><Keyword:thrownew><Plain:IllegalStateException(><String:"bad"><Plain:+x);}>"#,
                    r#"<Keyword:int><Plain:[]xs={><Number:1><Plain:,><Number:2><Plain:,><Number:3><Plain:};><Comment://note>"#,
                    r#"<Keyword:char><Plain:c=><String:'a'><Plain:;><Keyword:long><Plain:big=><Number:10L><Plain:;><Keyword:double><Plain:d=><Number:1.5e3><Plain:;>"#,
                    r#"<Keyword:for><Plain:(><Keyword:int><Plain:i=><Number:0><Plain:;i<><Number:10><Plain:;i++){sum+=i;}>"#,
                    r#"<Plain:}>"#,
                ],
            ),
            (
                "java",
                r#"String s = foo(bar);
return foo(x);
} else if (x > 0) {
} catch (IOException e) {
@Override public String toString() { return "x"; }
private static final Map<String, List<Integer>> CACHE = new HashMap<>();
Runnable r = () -> System.out.println(1);"#,
                &[
                    r#"<Plain:Strings=foo(bar);>"#,
                    r#"<Keyword:return><Plain:foo(x);>"#,
                    r#"<Plain:}><Keyword:elseif><Plain:(x>><Number:0><Plain:){>"#,
                    r#"<Plain:}><Keyword:catch><Plain:(IOExceptione){>"#,
                    r#"<Meta:@Override><Keyword:public><Function:StringtoString><Variable:()><Plain:{><Keyword:return><String:"x"><Plain:;}>"#,
                    r#"<Keyword:privatestaticfinal><Plain:Map<String,List<Integer>>CACHE=><Keyword:new><Plain:HashMap<>();>"#,
                    r#"<Plain:Runnabler=()->System.out.println(><Number:1><Plain:);>"#,
                ],
            ),
        ];
        for (lang, code, want) in cases {
            assert_eq!(runs(code, lang), *want, "{lang}:\n{code}");
        }
    }

    /// CSS and SQL as pi 1.6 paints them: selectors and properties plain, numbers, colours,
    /// at-rules, functions and `!important`; SQL comparisons as operators.
    #[test]
    fn css_and_sql_get_the_classes_pi_16_gives_them() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "css",
                r#"/* comment */
.btn:hover, #main > a {
  color: #fff;
  margin: 0 10px;
  font-family: "Inter", sans-serif;
}
@media (max-width: 600px) { body { display: none !important; } }"#,
                &[
                    r#"<Comment:/*comment*/>"#,
                    r#"<Plain:.btn:hover,#main>a{>"#,
                    r#"<Plain:color:><Number:#fff><Plain:;>"#,
                    r#"<Plain:margin:><Number:010px><Plain:;>"#,
                    r#"<Plain:font-family:><String:"Inter"><Plain:,sans-serif;>"#,
                    r#"<Plain:}>"#,
                    r#"<Keyword:@media><Plain:(max-width:><Number:600px><Plain:){body{display:none><Meta:!important><Plain:;}}>"#,
                ],
            ),
            (
                "css",
                r#":root { --main-color: #06c; }
a[href^="http"]::after { content: "\2192"; width: calc(100% - 2em); }
@import url("x.css");"#,
                &[
                    r#"<Plain::root{--main-color:><Number:#06c><Plain:;}>"#,
                    r#"<Plain:a[href^=><String:"http"><Plain:]::after{content:><String:"\2192"><Plain:;width:><Type:calc><Plain:(><Number:100%><Plain:-><Number:2em><Plain:);}>"#,
                    r#"<Keyword:@import><Plain:url(><String:"x.css"><Plain:);>"#,
                ],
            ),
            (
                "sql",
                r#"-- comment
SELECT id, name FROM users WHERE age > 21 AND name = 'bob';
INSERT INTO t (a, b) VALUES (1, NULL);"#,
                &[
                    r#"<Comment:--comment>"#,
                    r#"<Keyword:SELECT><Plain:id,name><Keyword:FROM><Plain:users><Keyword:WHERE><Plain:age><Operator:>><Number:21><Keyword:AND><Plain:name><Operator:=><String:'bob'><Plain:;>"#,
                    r#"<Keyword:INSERTINTO><Plain:t(a,b)><Keyword:VALUES><Plain:(><Number:1><Plain:,><Keyword:NULL><Plain:);>"#,
                ],
            ),
        ];
        for (lang, code, want) in cases {
            assert_eq!(runs(code, lang), *want, "{lang}:\n{code}");
        }
    }

    /// JSX in JavaScript and TypeScript as pi 1.6 paints it: tags, names, attributes and
    /// values; a `</tag>` leaves the lines after it alone, and `<` in strings, comments,
    /// regular expressions and comparisons opens no tag.
    #[test]
    fn jsx_tags_get_the_classes_pi_16_gives_them() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "tsx",
                r#"function App({ title }) {
  return <div className="app">{title}</div>;
}
const x = 1;"#,
                &[
                    r#"<Keyword:function><Function:App(><Variable:{title}><Function:)><Plain:{>"#,
                    r#"<Keyword:return><Punctuation:<><Keyword:div><Variable:className><Punctuation:=><String:"app"><Punctuation:>><Plain:{title}><Punctuation:</><Keyword:div><Punctuation:>><Plain:;>"#,
                    r#"<Plain:}>"#,
                    r#"<Keyword:const><Plain:x=><Number:1><Plain:;>"#,
                ],
            ),
            (
                "jsx",
                r#"const html = "<b>bold</b>";
if (a < b && c > d) { x = a<b; }
// <div> in a comment
const re = /<\/?div>/g;
return (
  <>
    <Item key={i} {...props} />
  </>
);"#,
                &[
                    r#"<Keyword:const><Plain:html=><String:"<b>bold</b>"><Plain:;>"#,
                    r#"<Keyword:if><Plain:(a<b&&c>d){x=a<b;}>"#,
                    r#"<Comment://<div>inacomment>"#,
                    r#"<Keyword:const><Plain:re=><String:/<\/?div>/g><Plain:;>"#,
                    r#"<Keyword:return><Plain:(>"#,
                    r#"<Punctuation:<>>"#,
                    r#"<Punctuation:<><Keyword:Item><Variable:key><Punctuation:=><String:{i}><Punctuation:{><Variable:...props><Punctuation:}/>>"#,
                    r#"<Punctuation:</>>"#,
                    r#"<Plain:);>"#,
                ],
            ),
        ];
        for (lang, code, want) in cases {
            assert_eq!(runs(code, lang), *want, "{lang}:\n{code}");
        }
    }

    #[test]
    fn other_languages_keep_operators_and_punctuation_plain() {
        let lines = runs("int main() { return 1 + 2; }", "c");
        assert_eq!(
            lines,
            ["<Keyword:int><Function:main><Plain:(){><Keyword:return><Number:1><Plain:+><Number:2><Plain:;}>"]
        );
    }
}
