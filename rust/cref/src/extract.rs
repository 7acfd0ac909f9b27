// SPDX-License-Identifier: GPL-2.0

//! Takes C out of the real sources by name, so that nothing the
//! differential tests compare against is retyped (issue 12).
//!
//! Used by `build.rs` (`#[path]`), and unit-tested here by `cargo test`.
//! Everything works on a *mask* of the text: comments and the insides of
//! string and character literals are blanked (newlines kept), so braces,
//! parentheses and names inside them never count, and every offset in the
//! mask is the same offset in the original. Every lookup must find exactly
//! one match, or it fails with a message that says what was looked for and
//! where: a source that changed shape stops the build, it is never
//! silently skipped.

use std::fmt::Write as _;

/// A piece of C taken from a source, and the 1-based lines it spans there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// The text, exactly as in the source (for functions, groups, macros
    /// and types), or with comments blanked and whitespace runs collapsed
    /// (for conditions and statements, which become macros).
    pub text: String,
    /// First line in the source, 1-based.
    pub first_line: usize,
    /// Last line in the source, 1-based.
    pub last_line: usize,
}

/// Blanks comments and literal contents; see the module doc.
pub fn mask(src: &str) -> String {
    #[derive(PartialEq)]
    enum S {
        Code,
        Line,
        Block,
        Str(u8),
    }
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut s = S::Code;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied().unwrap_or(0);
        match s {
            S::Code => match c {
                b'/' if next == b'/' => {
                    s = S::Line;
                    out[i] = b' ';
                    out[i + 1] = b' ';
                    i += 1;
                }
                b'/' if next == b'*' => {
                    s = S::Block;
                    out[i] = b' ';
                    out[i + 1] = b' ';
                    i += 1;
                }
                b'"' | b'\'' => s = S::Str(c),
                _ => {}
            },
            S::Line => {
                if c == b'\n' {
                    s = S::Code;
                } else {
                    out[i] = b' ';
                }
            }
            S::Block => {
                if c == b'*' && next == b'/' {
                    out[i] = b' ';
                    out[i + 1] = b' ';
                    i += 1;
                    s = S::Code;
                } else if c != b'\n' {
                    out[i] = b' ';
                }
            }
            S::Str(q) => {
                if c == b'\\' && next != b'\n' {
                    out[i] = b' ';
                    if i + 1 < b.len() {
                        out[i + 1] = b' ';
                    }
                    i += 1;
                } else if c == q {
                    s = S::Code;
                } else if c == b'\n' {
                    // An unterminated quote (an apostrophe in an #error
                    // line): stop at the end of the line.
                    s = S::Code;
                } else {
                    out[i] = b' ';
                }
            }
        }
        i += 1;
    }
    // Only ASCII bytes were replaced by ASCII spaces, and only inside
    // comments or literals, whose multi-byte characters are blanked whole.
    String::from_utf8(out).unwrap_or_else(|e| {
        String::from_utf8_lossy(e.as_bytes())
            .chars()
            .map(|c| if c.is_ascii() { c } else { ' ' })
            .collect()
    })
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Byte offsets where `word` occurs as a whole identifier in `m`.
fn word_at(m: &str, word: &str) -> Vec<usize> {
    let b = m.as_bytes();
    m.match_indices(word)
        .map(|(i, _)| i)
        .filter(|&i| {
            (i == 0 || !is_ident(b[i - 1]))
                && !matches!(b.get(i + word.len()), Some(&c) if is_ident(c))
        })
        .collect()
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The offset of the bracket that closes the one at `open`.
fn matching(m: &str, open: usize) -> Result<usize, String> {
    let b = m.as_bytes();
    let (o, c) = match b.get(open) {
        Some(b'(') => (b'(', b')'),
        Some(b'{') => (b'{', b'}'),
        Some(b'[') => (b'[', b']'),
        _ => return Err(format!("no bracket at offset {open}")),
    };
    let mut depth = 0usize;
    for (i, &x) in b.iter().enumerate().skip(open) {
        if x == o {
            depth += 1;
        } else if x == c {
            depth -= 1;
            if depth == 0 {
                return Ok(i);
            }
        }
    }
    Err(format!(
        "unbalanced '{}' at line {}",
        o as char,
        line_of(m, open)
    ))
}

/// Brace depth at every offset's start (0 = file scope).
fn depths(m: &str) -> Vec<u32> {
    let mut d = 0u32;
    m.bytes()
        .map(|c| {
            let here = d;
            match c {
                b'{' => d += 1,
                b'}' => d = d.saturating_sub(1),
                _ => {}
            }
            here
        })
        .collect()
}

/// 1-based line number of an offset.
pub fn line_of(s: &str, off: usize) -> usize {
    s.as_bytes()[..off.min(s.len())]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

fn line_start(s: &str, off: usize) -> usize {
    s[..off].rfind('\n').map_or(0, |i| i + 1)
}

fn line_end(s: &str, off: usize) -> usize {
    s[off..].find('\n').map_or(s.len(), |i| off + i)
}

/// A function definition: its text range and the range of its body.
#[derive(Clone, Copy, Debug)]
struct Def {
    start: usize,
    end: usize, // one past the closing brace
    body: (usize, usize),
}

/// Every file-scope definition of function `name`: the name followed by a
/// parameter list, then (after any attribute-like `X(...)`) a `{`. The
/// definition starts at the first line of its declaration specifiers:
/// going up from the name's line while the line above is code that does
/// not end a declaration, a block or a directive.
fn defs(m: &str, name: &str) -> Result<Vec<Def>, String> {
    let b = m.as_bytes();
    let depth = depths(m);
    let mut out = Vec::new();
    for at in word_at(m, name) {
        if depth[at] != 0 {
            continue;
        }
        let p = skip_ws(b, at + name.len());
        if b.get(p) != Some(&b'(') {
            continue;
        }
        let mut q = skip_ws(b, matching(m, p)? + 1);
        // Attribute-like macros between the parameters and the body.
        while q < b.len() && is_ident(b[q]) {
            let mut e = q;
            while e < b.len() && is_ident(b[e]) {
                e += 1;
            }
            let e = skip_ws(b, e);
            if b.get(e) != Some(&b'(') {
                break;
            }
            q = skip_ws(b, matching(m, e)? + 1);
        }
        if b.get(q) != Some(&b'{') {
            continue;
        }
        let close = matching(m, q)?;
        let mut start = line_start(m, at);
        while start > 0 {
            let prev = line_start(m, start - 1);
            let t = m[prev..start - 1].trim();
            if t.is_empty()
                || t.starts_with('#')
                || t.ends_with(';')
                || t.ends_with('}')
                || t.ends_with('{')
                || t.ends_with('\\')
            {
                break;
            }
            start = prev;
        }
        // The original text may start with a comment on that line; the
        // mask shows where code starts.
        let start = start + (m[start..].len() - m[start..].trim_start().len());
        out.push(Def {
            start,
            end: close + 1,
            body: (q, close + 1),
        });
    }
    Ok(out)
}

/// A preprocessor conditional: the lines of its `#if`, `#elif`/`#else`
/// and `#endif` directives (0-based), and its nesting parent.
#[derive(Clone, Debug)]
struct Cond {
    lines: Vec<usize>,
    end: usize,
    parent: Option<usize>,
}

fn directive(line: &str) -> Option<&str> {
    let t = line.trim_start().strip_prefix('#')?.trim_start();
    let w = t.split(|c: char| !c.is_ascii_alphanumeric()).next()?;
    Some(w)
}

/// The conditionals of a masked text, and for each line the innermost one
/// that contains it.
fn conds(m: &str) -> Result<(Vec<Cond>, Vec<Option<usize>>), String> {
    let mut all: Vec<Cond> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut inner = Vec::new();
    for (n, line) in m.lines().enumerate() {
        match directive(line) {
            Some("if" | "ifdef" | "ifndef") => {
                all.push(Cond {
                    lines: vec![n],
                    end: n,
                    parent: stack.last().copied(),
                });
                stack.push(all.len() - 1);
                inner.push(Some(all.len() - 1));
            }
            Some("elif" | "else") => {
                let c = *stack
                    .last()
                    .ok_or(format!("#{line} without #if at line {}", n + 1))?;
                all[c].lines.push(n);
                inner.push(Some(c));
            }
            Some("endif") => {
                let c = stack
                    .pop()
                    .ok_or(format!("#endif without #if at line {}", n + 1))?;
                all[c].lines.push(n);
                all[c].end = n;
                inner.push(Some(c));
            }
            _ => inner.push(stack.last().copied()),
        }
    }
    if !stack.is_empty() {
        return Err("unterminated #if".into());
    }
    Ok((all, inner))
}

/// Several definitions of one name (a function or a macro per `#if`
/// branch): the innermost conditional that holds all of them, with only
/// its directives (and those of conditionals nested in it, with their
/// continuation lines) and the definitions' own lines kept. Everything
/// else in the group (comments, other code) is left out.
fn group(src: &str, m: &str, spans: &[(usize, usize)], what: &str) -> Result<Piece, String> {
    let (all, inner) = conds(m)?;
    let chain = |line: usize| {
        let mut v = Vec::new();
        let mut c = inner[line];
        while let Some(i) = c {
            v.push(i);
            c = all[i].parent;
        }
        v
    };
    let first = chain(line_of(m, spans[0].0) - 1);
    let common = first
        .iter()
        .copied()
        .find(|c| spans.iter().all(|s| chain(line_of(m, s.0) - 1).contains(c)))
        .ok_or(format!(
            "{what} is defined {} times, not inside one #if",
            spans.len()
        ))?;
    let g = &all[common];
    let (lo, hi) = (g.lines[0], g.end);
    let lines: Vec<&str> = m.lines().collect();
    let mut keep = vec![false; hi + 1];
    for n in lo..=hi {
        let nested = matches!(
            directive(lines[n]),
            Some("if" | "ifdef" | "ifndef" | "elif" | "else" | "endif")
        );
        if nested {
            // With its continuation lines.
            let mut k = n;
            keep[k] = true;
            while lines[k].trim_end().ends_with('\\') && k < hi {
                k += 1;
                keep[k] = true;
            }
        }
    }
    for &(s, e) in spans {
        keep[line_of(m, s) - 1..line_of(m, e.saturating_sub(1))].fill(true);
    }
    let text: Vec<&str> = src
        .lines()
        .enumerate()
        .filter(|(n, _)| *n <= hi && keep[*n])
        .map(|(_, l)| l)
        .collect();
    Ok(Piece {
        text: text.join("\n"),
        first_line: lo + 1,
        last_line: hi + 1,
    })
}

/// The definition of C function `name`, with its declaration specifiers.
/// Where `src` defines it more than once (one per `#if` branch), the whole
/// conditional, reduced to its directives and those definitions.
pub fn function(src: &str, name: &str) -> Result<Piece, String> {
    let m = mask(src);
    let d = defs(&m, name)?;
    match d.as_slice() {
        [] => Err(format!("no definition of function {name}()")),
        [one] => Ok(Piece {
            text: src[one.start..one.end].to_string(),
            first_line: line_of(src, one.start),
            last_line: line_of(src, one.end - 1),
        }),
        many => {
            let spans: Vec<_> = many.iter().map(|d| (d.start, d.end)).collect();
            group(src, &m, &spans, &format!("function {name}()"))
        }
    }
}

/// The `#define` of macro `name`, with its continuation lines; where it is
/// defined once per `#if` branch, the conditional as for [`function`].
pub fn macro_def(src: &str, name: &str) -> Result<Piece, String> {
    let m = mask(src);
    let mut spans = Vec::new();
    let mut off = 0;
    for line in m.split_inclusive('\n') {
        let t = line.trim_start();
        let defines = t
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|t| t.strip_prefix("define"))
            .filter(|t| t.starts_with([' ', '\t']))
            .map(str::trim_start)
            .and_then(|t| t.strip_prefix(name))
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'));
        if defines {
            let mut end = off + line.trim_end_matches('\n').len();
            while m[..end].trim_end().ends_with('\\') && end < m.len() {
                end = line_end(&m, end + 1);
            }
            spans.push((off, end));
        }
        off += line.len();
    }
    // Continuation lines of one #define are not themselves #defines, so
    // spans never overlap.
    match spans.as_slice() {
        [] => Err(format!("no #define {name}")),
        [(s, e)] => Ok(Piece {
            text: src[*s..*e].to_string(),
            first_line: line_of(src, *s),
            last_line: line_of(src, *e),
        }),
        many => group(src, &m, many, &format!("macro {name}")),
    }
}

/// The definition of `struct NAME`, `enum NAME` or `union NAME` (`kind`
/// and `name` given as e.g. `"enum group_type"`), through its `;`.
pub fn type_def(src: &str, tag: &str) -> Result<Piece, String> {
    let m = mask(src);
    let (s, open) = type_body(&m, tag)?;
    let close = matching(&m, open)?;
    let semi = skip_ws(m.as_bytes(), close + 1);
    if m.as_bytes().get(semi) != Some(&b';') {
        return Err(format!("{tag} {{...}} is not followed by ';'"));
    }
    Ok(Piece {
        text: src[s..=semi].to_string(),
        first_line: line_of(src, s),
        last_line: line_of(src, semi),
    })
}

fn type_body(m: &str, tag: &str) -> Result<(usize, usize), String> {
    let (kind, name) = tag
        .split_once(' ')
        .ok_or(format!("'{tag}' is not 'struct NAME' or 'enum NAME'"))?;
    let depth = depths(m);
    let b = m.as_bytes();
    let mut found = Vec::new();
    for at in word_at(m, name) {
        if depth[at] != 0 {
            continue;
        }
        let before = m[..at].trim_end();
        if !before.ends_with(kind)
            || before[..before.len() - kind.len()]
                .bytes()
                .last()
                .is_some_and(is_ident)
        {
            continue;
        }
        let open = skip_ws(b, at + name.len());
        if b.get(open) == Some(&b'{') {
            found.push((before.len() - kind.len(), open));
        }
    }
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!("no definition of {tag}")),
        _ => Err(format!("{tag} is defined {} times", found.len())),
    }
}

/// The declarations of the named members of `struct NAME`, one a line,
/// comments and directives left out, in the order asked for: for a struct
/// of just the members a test needs, with the kernel's own types.
pub fn members(src: &str, tag: &str, names: &[&str]) -> Result<Piece, String> {
    let m = mask(src);
    let (_, open) = type_body(&m, tag)?;
    let close = matching(&m, open)?;
    let b = m.as_bytes();
    // Split the body into declarations at ';' on the body's own level.
    let mut decls = Vec::new();
    let (mut depth, mut from) = (0u32, open + 1);
    for (i, &c) in b.iter().enumerate().take(close).skip(open + 1) {
        match c {
            b'{' | b'(' => depth += 1,
            b'}' | b')' => depth -= 1,
            b';' if depth == 0 => {
                decls.push((from, i + 1));
                from = i + 1;
            }
            _ => {}
        }
    }
    let mut out = String::new();
    for name in names {
        let hits: Vec<_> = decls
            .iter()
            .filter(|(s, e)| {
                let d = &m[*s..*e];
                word_at(d, name).iter().any(|&k| {
                    let after = skip_ws(d.as_bytes(), k + name.len());
                    matches!(d.as_bytes().get(after), Some(b';' | b'[' | b':' | b','))
                })
            })
            .collect();
        let &(s, e) = match hits.as_slice() {
            [one] => *one,
            [] => return Err(format!("{tag} has no member {name}")),
            _ => return Err(format!("{tag} declares {name} {} times", hits.len())),
        };
        let decl: Vec<&str> = m[s..e]
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let _ = writeln!(out, "\t{}", decl.join(" "));
    }
    Ok(Piece {
        text: out.trim_end().to_string(),
        first_line: line_of(src, open),
        last_line: line_of(src, close),
    })
}

/// Comments blanked, whitespace runs collapsed to one space: one line that
/// a `#define` can hold.
fn flat(m: &str) -> String {
    m.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn unique(m: &str, needle: &str, what: &str) -> Result<usize, String> {
    let hits: Vec<_> = m.match_indices(needle).map(|(i, _)| i).collect();
    match hits.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!("'{needle}' not found in {what}")),
        _ => Err(format!("'{needle}' found {} times in {what}", hits.len())),
    }
}

/// The condition of the innermost `if (...)` around `needle` in the body
/// of function `func` (the one definition whose body holds `needle`
/// exactly once), flattened to one line.
pub fn if_condition(src: &str, func: &str, needle: &str) -> Result<Piece, String> {
    let m = mask(src);
    let bodies: Vec<_> = defs(&m, func)?
        .into_iter()
        .filter(|d| m[d.body.0..d.body.1].contains(needle))
        .collect();
    let d = match bodies.as_slice() {
        [one] => *one,
        [] => return Err(format!("no definition of {func}() holds '{needle}'")),
        _ => {
            return Err(format!(
                "{} definitions of {func}() hold '{needle}'",
                bodies.len()
            ))
        }
    };
    let body = &m[d.body.0..d.body.1];
    let at = d.body.0 + unique(body, needle, &format!("{func}()"))?;
    condition_at(src, &m, d.body.0, at, &format!("'{needle}' in {func}()"))
}

/// The condition of the innermost `if (...)` around `needle` (found once)
/// in a fragment of code, such as one side of a hunk.
pub fn condition(text: &str, needle: &str) -> Result<Piece, String> {
    let m = mask(text);
    let at = unique(&m, needle, "the text")?;
    condition_at(text, &m, 0, at, &format!("'{needle}'"))
}

fn condition_at(src: &str, m: &str, floor: usize, at: usize, what: &str) -> Result<Piece, String> {
    let open = enclosing_if(m, floor, at).ok_or(format!("{what} is not inside an if (...)"))?;
    let close = matching(m, open)?;
    Ok(Piece {
        text: flat(&m[open + 1..close]),
        first_line: line_of(src, open),
        last_line: line_of(src, close),
    })
}

/// The `(` of the innermost `if (` whose parentheses contain `at`.
fn enclosing_if(m: &str, floor: usize, at: usize) -> Option<usize> {
    let b = m.as_bytes();
    let mut depth = 0usize;
    let mut i = at;
    while i > floor {
        i -= 1;
        match b[i] {
            b')' => depth += 1,
            b'(' if depth > 0 => depth -= 1,
            b'(' => {
                let kw = m[floor..i].trim_end();
                if kw.ends_with("if") && !kw[..kw.len() - 2].bytes().last().is_some_and(is_ident) {
                    return Some(i);
                }
            }
            b';' | b'{' | b'}' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The statement that starts at `needle` in `text`: through the `;` that
/// ends it, or for `if`/`while`/`for`, through its block or statement
/// (and an `else` that follows). Flattened to one line.
pub fn statement(text: &str, needle: &str) -> Result<Piece, String> {
    let m = mask(text);
    let s = unique(&m, needle, "the text")?;
    let e = statement_end(&m, s)?;
    Ok(Piece {
        text: flat(&m[s..e]),
        first_line: line_of(text, s),
        last_line: line_of(text, e.saturating_sub(1)),
    })
}

fn statement_end(m: &str, s: usize) -> Result<usize, String> {
    let b = m.as_bytes();
    let word: String = m[s..]
        .bytes()
        .take_while(|&c| is_ident(c))
        .map(char::from)
        .collect();
    let mut i = s;
    if matches!(word.as_str(), "if" | "while" | "for" | "switch") {
        let p = skip_ws(b, s + word.len());
        if b.get(p) != Some(&b'(') {
            return Err(format!("'{word}' without '(' at line {}", line_of(m, s)));
        }
        i = skip_ws(b, matching(m, p)? + 1);
        let end = if b.get(i) == Some(&b'{') {
            matching(m, i)? + 1
        } else {
            statement_end(m, i)?
        };
        let e = skip_ws(b, end);
        if word == "if" && m[e..].starts_with("else") && !b.get(e + 4).is_some_and(|&c| is_ident(c))
        {
            let x = skip_ws(b, e + 4);
            return if b.get(x) == Some(&b'{') {
                Ok(matching(m, x)? + 1)
            } else {
                statement_end(m, x)
            };
        }
        return Ok(end);
    }
    let mut depth = 0usize;
    while i < b.len() {
        match b[i] {
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => {
                depth = depth.checked_sub(1).ok_or(format!(
                    "statement at line {} leaves its block",
                    line_of(m, s)
                ))?
            }
            b';' if depth == 0 => return Ok(i + 1),
            _ => {}
        }
        i += 1;
    }
    Err(format!("statement at line {} has no ';'", line_of(m, s)))
}

/// Whole lines of `text`, from the one holding `from` through the one
/// holding `to` (each found once), comments blanked.
pub fn lines_span(text: &str, from: &str, to: &str) -> Result<Piece, String> {
    let m = mask(text);
    let s = line_start(&m, unique(&m, from, "the text")?);
    let t = unique(&m, to, "the text")?;
    if t < s {
        return Err(format!("'{to}' comes before '{from}'"));
    }
    let e = line_end(&m, t);
    let lines: Vec<&str> = m[s..e]
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    Ok(Piece {
        text: lines.join("\n"),
        first_line: line_of(text, s),
        last_line: line_of(text, e),
    })
}

/// One side of a diff hunk, as the file read before or after the patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Context and `-` lines.
    Old,
    /// Context and `+` lines.
    New,
}

/// A hunk of a patch in a mail thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// The `@@ ... @@` line.
    pub header: String,
    /// The hunk's lines with their `' '`, `'-'` or `'+'`; a line the mail
    /// left empty is context.
    pub lines: Vec<String>,
    /// 1-based line of the header in the thread file.
    pub at_line: usize,
}

impl Hunk {
    /// The hunk as one side reads it.
    pub fn side(&self, side: Side) -> String {
        let skip = if side == Side::Old { '+' } else { '-' };
        self.lines
            .iter()
            .filter(|l| !l.starts_with(skip))
            .map(|l| l.get(1..).unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The messages of a thread file: a title line, an empty line, and
/// `[Author]` alone on the next one start each message. Returns
/// (title, author, first line, end line) with 0-based lines.
fn messages(lines: &[&str]) -> Vec<(String, String, usize, usize)> {
    let mut starts = Vec::new();
    for i in 0..lines.len().saturating_sub(2) {
        let a = lines[i + 2].trim_end();
        if !lines[i].trim().is_empty()
            && lines[i + 1].trim().is_empty()
            && a.starts_with('[')
            && a.ends_with(']')
            && !a[1..a.len() - 1].contains(['[', ']'])
            // Not a MIME part marker, "[-- Attachment #1: ... --]".
            && !a.starts_with("[--")
        {
            starts.push((
                lines[i].trim().to_string(),
                a[1..a.len() - 1].to_string(),
                i,
            ));
        }
    }
    let mut out = Vec::new();
    for (k, (t, a, s)) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(lines.len(), |n| n.2);
        out.push((t.clone(), a.clone(), *s, end));
    }
    out
}

/// The (first line, end line) of each message of `lines` whose title
/// starts with `title` and whose author is `author`; at least one.
fn messages_by(lines: &[&str], title: &str, author: &str) -> Result<Vec<(usize, usize)>, String> {
    let msgs: Vec<_> = messages(lines)
        .into_iter()
        .filter(|(t, a, _, _)| t.starts_with(title) && a == author)
        .map(|(_, _, s, e)| (s, e))
        .collect();
    if msgs.is_empty() {
        return Err(format!("no message '{title}...' by {author}"));
    }
    Ok(msgs)
}

fn hunk_counts(header: &str) -> Option<(usize, usize)> {
    let rest = header.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let count = |r: &str| -> Option<usize> {
        match r.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => Some(1),
        }
    };
    Some((count(old)?, count(new)?))
}

/// The one hunk of `file` that holds `needle` (on either side) in the
/// messages of `thread` whose title starts with `title` and whose author is
/// `author` (quoted hunks in replies do not parse, so do not count). Hunk ends are found from the `@@` counts, so a trailing
/// signature or quoted text never becomes code.
pub fn hunk(
    thread: &str,
    title: &str,
    author: &str,
    file: &str,
    needle: &str,
) -> Result<Hunk, String> {
    let lines: Vec<&str> = thread.lines().collect();
    let msgs = messages_by(&lines, title, author)?;
    let mut found = Vec::new();
    for (s, e) in msgs {
        hunks_in(&lines, s, e, file, needle, &mut found)?;
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(format!(
            "no hunk of {file} holds '{needle}' in '{title}' by {author}"
        )),
        n => Err(format!(
            "{n} hunks of {file} hold '{needle}' in '{title}' by {author}"
        )),
    }
}

/// Added lines that a reply quotes without the diff header [`hunk`] needs
/// (the mailer dropped the file, the indentation and the quote marks, so
/// only the `+` of each line is left): the run of consecutive `+` lines
/// holding `needle`, without the `+`, in the messages `title` by `author`.
/// A reply can quote a change more than once; every quote must read the
/// same. Returns the piece, its lines those of the first quote (1-based,
/// in the thread file).
pub fn quoted_added(
    thread: &str,
    title: &str,
    author: &str,
    needle: &str,
) -> Result<Piece, String> {
    let lines: Vec<&str> = thread.lines().collect();
    let msgs = messages_by(&lines, title, author)?;
    let added = |i: usize| lines[i].starts_with('+') && !lines[i].starts_with("+++");
    let mut quotes: Vec<Piece> = Vec::new();
    for (s, e) in msgs {
        let mut i = s;
        while i < e {
            if !added(i) {
                i += 1;
                continue;
            }
            let first = i;
            while i < e && added(i) {
                i += 1;
            }
            let run: Vec<&str> = lines[first..i].iter().map(|l| &l[1..]).collect();
            if run.iter().any(|l| l.contains(needle)) {
                quotes.push(Piece {
                    text: run.join("\n"),
                    first_line: first + 1,
                    last_line: i,
                });
            }
        }
    }
    let first = quotes.first().ok_or(format!(
        "no quoted '+' line holds '{needle}' in '{title}' by {author}"
    ))?;
    if let Some(q) = quotes.iter().find(|q| q.text != first.text) {
        return Err(format!(
            "'{needle}' is quoted differently at lines {} and {} of '{title}' by {author}",
            first.first_line, q.first_line
        ));
    }
    Ok(first.clone())
}

/// Every hunk of `file` holding `needle` in a patch file (`git
/// format-patch`'s mail, one patch, no thread around it), in order.
pub fn patch_hunks(patch: &str, file: &str, needle: &str) -> Result<Vec<Hunk>, String> {
    let lines: Vec<&str> = patch.lines().collect();
    let mut found = Vec::new();
    hunks_in(&lines, 0, lines.len(), file, needle, &mut found)?;
    Ok(found)
}

/// The hunks of `file` holding `needle` in lines `s..e` of a thread.
fn hunks_in(
    lines: &[&str],
    s: usize,
    e: usize,
    file: &str,
    needle: &str,
    found: &mut Vec<Hunk>,
) -> Result<(), String> {
    let mut cur_file = String::new();
    let mut i = s;
    while i < e {
        let l = lines[i];
        if let Some(p) = l.strip_prefix("+++ ") {
            cur_file = p.trim().trim_start_matches("b/").to_string();
        } else if l.starts_with("@@ ") {
            let (mut old, mut new) =
                hunk_counts(l).ok_or(format!("bad hunk header '{l}' at line {}", i + 1))?;
            let mut body = Vec::new();
            let mut k = i + 1;
            while (old > 0 || new > 0) && k < e {
                let x = lines[k];
                match x.chars().next() {
                    Some('-') => old = old.checked_sub(1).ok_or("hunk longer than its header")?,
                    Some('+') => new = new.checked_sub(1).ok_or("hunk longer than its header")?,
                    Some('\\') => {
                        k += 1;
                        continue;
                    }
                    Some(' ') | None => {
                        old = old.checked_sub(1).ok_or("hunk longer than its header")?;
                        new = new.checked_sub(1).ok_or("hunk longer than its header")?;
                    }
                    Some(_) => break,
                }
                body.push(if x.is_empty() {
                    " ".to_string()
                } else {
                    x.to_string()
                });
                k += 1;
            }
            if old > 0 || new > 0 {
                return Err(format!("hunk at line {} is cut short", i + 1));
            }
            if cur_file == file && body.iter().any(|x| x.contains(needle)) {
                found.push(Hunk {
                    header: l.to_string(),
                    lines: body,
                    at_line: i + 1,
                });
            }
            i = k;
            continue;
        }
        i += 1;
    }
    Ok(())
}

/// `text` (a function of a later tree) with `hunk` reversed: the hunk's
/// new side, compared line by line without comments, blank lines and
/// indentation, must occur exactly once; those lines (and any comments or
/// blank lines between them) are replaced by the hunk's old side.
pub fn reverse_apply(text: &str, hunk: &Hunk) -> Result<String, String> {
    let key = |s: &str| -> Vec<String> {
        mask(s)
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    // Context lines without code at either end of the hunk (blank lines,
    // comments) are left out of both sides, so that the text's own
    // comments there stay once.
    let new_keys = key(&hunk.side(Side::New));
    let first_change = hunk.lines.iter().position(|l| !l.starts_with(' '));
    let last_change = hunk.lines.iter().rposition(|l| !l.starts_with(' '));
    let (Some(fc), Some(lc)) = (first_change, last_change) else {
        return Err(format!("hunk '{}' changes nothing", hunk.header));
    };
    let lead = new_keys
        .iter()
        .take(fc)
        .take_while(|k| k.is_empty())
        .count();
    let tail_ctx = hunk.lines.len() - 1 - lc;
    let trail = new_keys
        .iter()
        .rev()
        .take(tail_ctx)
        .take_while(|k| k.is_empty())
        .count();
    let trimmed = Hunk {
        header: hunk.header.clone(),
        lines: hunk.lines[lead..hunk.lines.len() - trail].to_vec(),
        at_line: hunk.at_line,
    };
    let new: Vec<String> = key(&trimmed.side(Side::New))
        .into_iter()
        .filter(|l| !l.is_empty())
        .collect();
    if new.is_empty() {
        return Err(format!(
            "hunk '{}' has no code on its new side",
            hunk.header
        ));
    }
    let tk = key(text);
    let code: Vec<usize> = (0..tk.len()).filter(|&i| !tk[i].is_empty()).collect();
    let hits: Vec<usize> = (0..code.len().saturating_sub(new.len() - 1))
        .filter(|&s| (0..new.len()).all(|k| tk[code[s + k]] == new[k]))
        .collect();
    let s = match hits.as_slice() {
        [one] => *one,
        [] => {
            return Err(format!(
                "the new side of hunk '{}' is not in the text",
                hunk.header
            ))
        }
        _ => {
            return Err(format!(
                "the new side of hunk '{}' occurs {} times",
                hunk.header,
                hits.len()
            ))
        }
    };
    let (a, z) = (code[s], code[s + new.len() - 1]);
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines[..a].iter().map(|l| l.to_string()).collect();
    let old = trimmed.side(Side::Old);
    let old_keys = key(&old);
    let old_lines: Vec<&str> = old.lines().collect();
    // The trimmed old side, from its first line of code on: the lines above
    // that are the text's own.
    let from = old_keys.iter().position(|k| !k.is_empty()).unwrap_or(0);
    let to = old_keys
        .iter()
        .rposition(|k| !k.is_empty())
        .map_or(0, |i| i + 1);
    out.extend(old_lines[from..to].iter().map(|l| l.to_string()));
    out.extend(lines[z + 1..].iter().map(|l| l.to_string()));
    Ok(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"/* a { comment */
#define ZERO 0
#define TWO(x) \
	((x) + \
	 ONE)
static const char *s = "}{";

static inline unsigned long
f(int a) /* } */
{
	if (a) {
		return '}';
	}
	return g(a);
}

// f(int b) { in a comment }
int g(int a);

#if X
/* first */
#define ONE 1
static int h(void)
{
	return 1;
}
#elif Y
#define ONE 2
static int h(void)
{
#ifdef Z
	return 2;
#endif
	return 3;
}
#else
int other(void) { return 0; }
#endif

struct s {
	unsigned long a; /* a */
#ifdef CONFIG
	long b[4];
#endif
	union { int c; long d; };
	int (*fp)(int e);
};

enum e { A, B };
"#;

    #[test]
    fn mask_keeps_offsets_and_lines() {
        let m = mask(SRC);
        assert_eq!(m.len(), SRC.len());
        assert_eq!(m.lines().count(), SRC.lines().count());
        assert!(!m.contains("comment"));
        assert!(m.contains("\"  \""));
    }

    #[test]
    fn function_by_name_with_specifiers() {
        let p = function(SRC, "f").unwrap();
        assert!(p.text.starts_with("static inline unsigned long\nf(int a)"));
        assert!(p.text.ends_with("return g(a);\n}"));
        assert_eq!((p.first_line, p.last_line), (8, 15));
        // A declaration is not a definition; a comment is not code.
        assert!(function(SRC, "g").is_err());
        assert!(function(SRC, "nothing").is_err());
    }

    #[test]
    fn several_definitions_give_their_conditional() {
        let p = function(SRC, "h").unwrap();
        assert_eq!(
            p.text,
            "#if X\nstatic int h(void)\n{\n\treturn 1;\n}\n#elif Y\nstatic int h(void)\n{\n#ifdef Z\n\treturn 2;\n#endif\n\treturn 3;\n}\n#else\n#endif"
        );
        let one = macro_def(SRC, "ONE").unwrap();
        assert_eq!(
            one.text,
            "#if X\n#define ONE 1\n#elif Y\n#define ONE 2\n#ifdef Z\n#endif\n#else\n#endif"
        );
    }

    #[test]
    fn macros_with_continuations() {
        let p = macro_def(SRC, "TWO").unwrap();
        assert_eq!(p.text, "#define TWO(x) \\\n\t((x) + \\\n\t ONE)");
        assert!(macro_def(SRC, "TW").is_err());
    }

    #[test]
    fn types_and_members() {
        assert_eq!(type_def(SRC, "enum e").unwrap().text, "enum e { A, B };");
        let p = members(SRC, "struct s", &["b", "a"]).unwrap();
        assert_eq!(p.text, "\tlong b[4];\n\tunsigned long a;");
        assert!(members(SRC, "struct s", &["e"]).is_err());
    }

    #[test]
    fn conditions_and_statements() {
        let c = if_condition(SRC, "f", "a").unwrap_err();
        assert!(c.contains("found"), "{c}");
        let src = "int k(long x)\n{\n\tif (y &&\n\t    (x >> 2) > 1) /* c */\n\t\tgoto out;\n}\n";
        assert_eq!(
            if_condition(src, "k", "(x >> 2)").unwrap().text,
            "y && (x >> 2) > 1"
        );
        assert_eq!(condition(src, "> 1)").unwrap().text, "y && (x >> 2) > 1");
        assert!(condition(src, "goto").is_err());
        let t = "\tif (a) {\n\t\tb = 1; /* } */\n\t}\n\telse\n\t\tc;\n} else {\n";
        assert_eq!(
            statement(t, "if (a)").unwrap().text,
            "if (a) { b = 1; } else c;"
        );
        assert_eq!(statement(t, "b = 1").unwrap().text, "b = 1;");
        let l = lines_span("x;\n  a;\n\n  b; // c\nd;\n", "a;", "b;").unwrap();
        assert_eq!(l.text, "  a;\n  b;");
    }

    const THREAD: &str = "[PATCH 1/2] Title\n\n[Ann Author]\n\nText.\n---\n--- a/k/f.c\n+++ b/k/f.c\n@@ -1,4 +1,4 @@ ctx\n a;\n-b;\n+c;\n\n d;\n-- \n2.1\n\nRe: [PATCH 1/2] Title\n\n[Bob]\n\n> @@ -1,1 +1,1 @@\n> -b;\n";

    #[test]
    fn hunks_by_message_file_and_needle() {
        let h = hunk(THREAD, "[PATCH 1/2]", "Ann Author", "k/f.c", "c;").unwrap();
        assert_eq!(h.side(Side::Old), "a;\nb;\n\nd;");
        assert_eq!(h.side(Side::New), "a;\nc;\n\nd;");
        assert!(hunk(THREAD, "[PATCH 1/2]", "Bob", "k/f.c", "c;").is_err());
        assert!(hunk(THREAD, "[PATCH 1/2]", "Ann Author", "k/g.c", "c;").is_err());
        let r = reverse_apply("x;\na;\n/* new */\nc;\n\nd;\ny;", &h).unwrap();
        assert_eq!(r, "x;\na;\nb;\n\nd;\ny;");
        // Leading and trailing context without code stays the text's own.
        let t = "[PATCH] T\n\n[A]\n\n+++ b/f.c\n@@ -1,4 +1,5 @@\n \n /* c */\n a;\n+b;\n \n";
        let h = hunk(t, "[PATCH]", "A", "f.c", "b;").unwrap();
        let r = reverse_apply("{\n\t/* c */\n\t/* more */\n\ta;\n\tb;\n}", &h).unwrap();
        assert_eq!(r, "{\n\t/* c */\n\t/* more */\na;\n}");
        assert!(reverse_apply("a;\nc;\nd;", &h).is_err());
    }

    #[test]
    fn hunks_of_a_patch_file() {
        let p = "From x\nSubject: [PATCH 2/3] T\n---\ndiff --git a/k/f.c b/k/f.c\n--- a/k/f.c\n+++ b/k/f.c\n@@ -1,2 +1,2 @@\n a;\n-b;\n+c;\n@@ -9,1 +9,2 @@\n c;\n+d;\ndiff --git a/k/g.c b/k/g.c\n--- a/k/g.c\n+++ b/k/g.c\n@@ -1,1 +1,1 @@\n-c;\n+e;\n-- \n2.39\n";
        let h = patch_hunks(p, "k/f.c", "c;").unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(h[1].side(Side::New), "c;\nd;");
        assert_eq!(h[0].at_line, 7);
        assert!(patch_hunks(p, "k/f.c", "e;").unwrap().is_empty());
        assert_eq!(patch_hunks(p, "k/g.c", "c;").unwrap().len(), 1);
    }

    #[test]
    fn quoted_added_lines() {
        let t = "Re: T\n\n[A]\n\n-  if (a) {\n\n+  if (a +\n+  b) {\nc;\n\nRe: T\n\n[A]\n\n+  if (a +\n+  b) {\n\nRe: T\n\n[B]\n\n+  if (a + x) {\n";
        let q = quoted_added(t, "Re: T", "A", "if (a +").unwrap();
        assert_eq!(q.text, "  if (a +\n  b) {");
        assert_eq!((q.first_line, q.last_line), (7, 8));
        assert_eq!(condition(&q.text, "b)").unwrap().text, "a + b");
        assert!(quoted_added(t, "Re: T", "A", "nothing").is_err());
        assert!(quoted_added(t, "Re: T", "C", "if (a").is_err());
        // A and B quote it differently: refused, not one picked.
        let both = t.replace("[B]", "[A]");
        let e = quoted_added(&both, "Re: T", "A", "if (a").unwrap_err();
        assert!(e.contains("quoted differently"), "{e}");
    }
}
