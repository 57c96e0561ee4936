//! Grammars that stand in for an imported file the caller does not have:
//! `common.lark`, the terminals grammars import most (numbers, names,
//! strings, whitespace, comments), under the names Lark gives them.

/// `common.lark`: the same names and languages as Lark's, written here.
const COMMON: &str = r##"// Terminals for common use, under Lark's names.
DIGIT: "0".."9"
HEXDIGIT: "a".."f" | "A".."F" | DIGIT
INT: DIGIT+
SIGNED_INT: ["+" | "-"] INT
DECIMAL: INT "." INT? | "." INT
_EXP: ("e" | "E") SIGNED_INT
FLOAT: INT _EXP | DECIMAL _EXP?
SIGNED_FLOAT: ["+" | "-"] FLOAT
NUMBER: FLOAT | INT
SIGNED_NUMBER: ["+" | "-"] NUMBER

_STRING_CHAR: /[^"\\\n]/ | "\\" /[^\n]/
ESCAPED_STRING: "\"" _STRING_CHAR* "\""

LCASE_LETTER: "a".."z"
UCASE_LETTER: "A".."Z"
LETTER: UCASE_LETTER | LCASE_LETTER
WORD: LETTER+
CNAME: ("_" | LETTER) ("_" | LETTER | DIGIT)*

WS_INLINE: (" " | "\t")+
WS: (" " | "\t" | "\f" | "\r" | "\n")+
CR: "\r"
LF: "\n"
NEWLINE: (CR? LF)+

SH_COMMENT: "#" /[^\n]*/
CPP_COMMENT: "//" /[^\n]*/
C_COMMENT: "/*" /([^*]|\*+[^*\/])*\*+\//
SQL_COMMENT: "--" /[^\n]*/
"##;

/// The bundled grammar at `path`, if there is one.
pub fn grammar(path: &str) -> Option<&'static str> {
    match path {
        "common.lark" => Some(COMMON),
        _ => None,
    }
}
