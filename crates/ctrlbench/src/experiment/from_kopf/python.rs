//! Python read as the kopf reader needs it: logical lines (continuations
//! joined, comments and docstrings gone), identifiers, string literals as
//! Python spells them, assignments, and splitting at top-level separators.
//! No parser of Python: enough for decorators and status writes.

/// One logical line: a statement, its continuation lines joined, its
/// comments gone and its triple-quoted strings emptied.
#[derive(Debug, PartialEq)]
pub(super) struct Line {
    /// 1-based, of its first physical line.
    pub(super) no: usize,
    pub(super) indent: usize,
    pub(super) text: String,
}

pub(super) fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// `lhs = rhs` at the top level of `t`.
pub(super) fn assignment(t: &str) -> Option<(&str, &str)> {
    let b = t.as_bytes();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(qc) => {
                if c == b'\\' {
                    i += 1;
                } else if c == qc {
                    quote = None;
                }
            }
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b'=' if depth == 0 => {
                    let prev = if i > 0 { b[i - 1] } else { b' ' };
                    let next = b.get(i + 1).copied().unwrap_or(b' ');
                    // Not a comparison, an augmented assignment or `:=`.
                    if next != b'=' && !b"=<>!+-*/%&|^@:".contains(&prev) {
                        return Some((&t[..i], &t[i + 1..]));
                    }
                    if next == b'=' {
                        i += 1;
                    }
                }
                _ => {}
            },
        }
        i += 1;
    }
    None
}

/// `s` split at `sep` where no bracket or string is open.
pub(super) fn split_top(s: &str, sep: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in s.chars() {
        if let Some(qc) = quote {
            cur.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == qc {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

/// A Python string literal's value ('x', "x", r'x', u"x"); None for
/// anything else, f-strings and concatenations included.
pub(super) fn string_literal(e: &str) -> Option<String> {
    let e = e.trim();
    let (raw, body) = match e.char_indices().find(|(_, c)| *c == '\'' || *c == '"') {
        Some((at, _)) => {
            let prefix = e[..at].to_ascii_lowercase();
            match prefix.as_str() {
                "" | "u" => (false, &e[at..]),
                "r" => (true, &e[at..]),
                _ => return None,
            }
        }
        None => return None,
    };
    let qc = body.chars().next()?;
    let inner = body.strip_prefix(qc)?.strip_suffix(qc)?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == qc {
            return None;
        }
        if c == '\\' {
            let n = chars.next()?;
            match (raw, n) {
                (true, n) => {
                    out.push('\\');
                    out.push(n);
                }
                (false, 'n') => out.push('\n'),
                (false, 't') => out.push('\t'),
                (false, n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// The file's logical lines: physical lines joined inside brackets and
/// after a backslash, comments dropped, triple-quoted strings (docstrings)
/// emptied to `""`; blank lines left out. Line numbers stay the file's.
pub(super) fn logical_lines(src: &str) -> Vec<Line> {
    let c: Vec<char> = src.chars().collect();
    let mut lines = Vec::new();
    let mut cur = String::new();
    let (mut no, mut start) = (1, 1);
    let mut depth = 0i32;
    let mut i = 0;
    let mut flush = |cur: &mut String, start: usize| {
        let text = cur.trim_end();
        let body = text.trim_start();
        if !body.is_empty() {
            lines.push(Line {
                no: start,
                indent: text.len() - body.len(),
                text: body.to_string(),
            });
        }
        cur.clear();
    };
    while i < c.len() {
        match c[i] {
            '#' => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '\\' if c.get(i + 1) == Some(&'\n') => {
                cur.push(' ');
                no += 1;
                i += 2;
            }
            '\n' => {
                no += 1;
                i += 1;
                if depth > 0 {
                    cur.push(' ');
                } else {
                    flush(&mut cur, start);
                    start = no;
                }
            }
            qc @ ('\'' | '"') => {
                if c.get(i + 1) == Some(&qc) && c.get(i + 2) == Some(&qc) {
                    // A docstring or long text: what it says is not code.
                    cur.push(qc);
                    cur.push(qc);
                    i += 3;
                    while i < c.len()
                        && !(c[i] == qc && c.get(i + 1) == Some(&qc) && c.get(i + 2) == Some(&qc))
                    {
                        if c[i] == '\\' {
                            i += 1;
                        }
                        if c.get(i) == Some(&'\n') {
                            no += 1;
                        }
                        i += 1;
                    }
                    i += 3;
                } else {
                    cur.push(qc);
                    i += 1;
                    while i < c.len() && c[i] != qc && c[i] != '\n' {
                        if c[i] == '\\' && i + 1 < c.len() && c[i + 1] != '\n' {
                            cur.push(c[i]);
                            i += 1;
                        }
                        cur.push(c[i]);
                        i += 1;
                    }
                    if c.get(i) == Some(&qc) {
                        cur.push(qc);
                        i += 1;
                    }
                }
            }
            ch => {
                match ch {
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => depth = (depth - 1).max(0),
                    _ => {}
                }
                cur.push(ch);
                i += 1;
            }
        }
    }
    flush(&mut cur, start);
    lines
}
