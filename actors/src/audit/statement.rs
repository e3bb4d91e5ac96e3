//! A statement as the audit log keeps it: every literal (numbers, strings of every quoting) is
//! `?`, so the log says what was asked without holding the values asked for (a name, an id
//! number, a password given to a function). Read with the SQL tokenizer, so a quote inside a
//! string cannot hide a literal from it.

use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::tokenizer::{Token, Tokenizer};

/// The longest statement kept, in characters; longer ones are cut with `…`.
const KEPT_CHARS: usize = 4_096;

/// `sql` with its literals as `?` (a statement the tokenizer cannot read is kept as `?`: what
/// it holds cannot be told apart from its literals).
pub fn without_literals(sql: &str) -> String {
    match Tokenizer::new(&PostgreSqlDialect {}, sql).tokenize() {
        Ok(tokens) => tokens_without_literals(&tokens),
        Err(_) => "?".to_string(),
    }
}

/// A tokenized statement written back with its literals as `?`, cut at [`KEPT_CHARS`].
pub fn tokens_without_literals(tokens: &[Token]) -> String {
    let mut out = String::new();
    let mut kept = 0;
    for token in tokens {
        let piece = match token {
            Token::Number(..)
            | Token::SingleQuotedString(_)
            | Token::TripleSingleQuotedString(_)
            | Token::TripleDoubleQuotedString(_)
            | Token::DollarQuotedString(_)
            | Token::SingleQuotedByteStringLiteral(_)
            | Token::DoubleQuotedByteStringLiteral(_)
            | Token::TripleSingleQuotedByteStringLiteral(_)
            | Token::TripleDoubleQuotedByteStringLiteral(_)
            | Token::SingleQuotedRawStringLiteral(_)
            | Token::DoubleQuotedRawStringLiteral(_)
            | Token::TripleSingleQuotedRawStringLiteral(_)
            | Token::TripleDoubleQuotedRawStringLiteral(_)
            | Token::NationalStringLiteral(_)
            | Token::QuoteDelimitedStringLiteral(_)
            | Token::NationalQuoteDelimitedStringLiteral(_)
            | Token::EscapedStringLiteral(_)
            | Token::UnicodeStringLiteral(_)
            | Token::HexStringLiteral(_) => "?".to_string(),
            // Comments may hold anything: one space keeps the words apart.
            Token::Whitespace(w) => match w.to_string() {
                blank if blank.trim().is_empty() => blank,
                _ => " ".to_string(),
            },
            other => other.to_string(),
        };
        // Counted as it grows: a long statement is not counted again at every token.
        let chars = piece.chars().count();
        if kept + chars > KEPT_CHARS {
            out.extend(piece.chars().take(KEPT_CHARS - kept));
            return out + "…";
        }
        kept += chars;
        out.push_str(&piece);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::without_literals;

    #[test]
    fn every_literal_becomes_a_question_mark() {
        assert_eq!(
            without_literals("SELECT a, 'x''y', 1.5e3 FROM t WHERE b = E'\\n' AND c = $$z$$"),
            "SELECT a, ?, ? FROM t WHERE b = ? AND c = ?"
        );
        assert_eq!(
            without_literals("SELECT \"Name\" FROM t -- secret 42\nWHERE x = 7"),
            "SELECT \"Name\" FROM t  WHERE x = ?"
        );
        assert_eq!(
            without_literals("region = 'north' and n > 3"),
            "region = ? and n > ?"
        );
    }

    #[test]
    fn an_unreadable_statement_is_kept_as_a_mark() {
        assert_eq!(without_literals("SELECT 'unterminated"), "?");
    }
}
