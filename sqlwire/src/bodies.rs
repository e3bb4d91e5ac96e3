//! The bodies of the frontend messages whose pgwire 0.41.1 decoders read fields unchecked,
//! checked before pgwire sees them.
//!
//! pgwire's Parse, Bind, Close, Describe and Execute decoders call `get_u8`, `get_u16`,
//! `get_i32` and `split_to` without looking at what is left, so a body shorter than its fields
//! (a Bind parameter claiming more bytes than sent, a Describe with no body) panicked and ended
//! the connection's task (found by the `sql_wire` fuzz target, fuzz/README.md). [`check`] reads a
//! body as PostgreSQL reads it, with PostgreSQL's words for what is wrong; the message loop
//! (`framing`) answers a refused body `08P01` and never hands it to pgwire.

/// The tags of the messages [`check`] reads: those whose pgwire decoders can read past the end.
pub(crate) const CHECKED: &[u8] = b"PBCDE";

const INSUFFICIENT: &str = "insufficient data left in message";

/// Ok when `body` is a well-formed body of message `tag` (one of [`CHECKED`]) as PostgreSQL
/// reads it: every field inside the body, strings ended by a NUL, nothing after the last field.
/// Err: what is wrong.
pub(crate) fn check(tag: u8, body: &[u8]) -> Result<(), String> {
    let mut fields = Fields(body);
    match tag {
        b'P' => parse(&mut fields)?,
        b'B' => bind(&mut fields)?,
        b'C' => target(&mut fields, "CLOSE")?,
        b'D' => target(&mut fields, "DESCRIBE")?,
        b'E' => {
            fields.string()?;
            fields.take(4)?;
        }
        _ => {}
    }
    match fields.0.len() {
        0 => Ok(()),
        n => Err(format!("{n} bytes after the message's fields")),
    }
}

/// Parse: statement name, query, parameter type count (u16), that many type OIDs.
fn parse(fields: &mut Fields) -> Result<(), String> {
    fields.string()?;
    fields.string()?;
    let types = fields.u16()?;
    fields.take(4 * usize::from(types))?;
    Ok(())
}

/// Bind: portal and statement names, parameter format codes, parameters (an i32 length, -1 for
/// NULL, then its bytes), result format codes; PostgreSQL also refuses parameter formats that
/// are neither 0, 1 nor one per parameter (pgwire indexed them by parameter and panicked).
fn bind(fields: &mut Fields) -> Result<(), String> {
    fields.string()?;
    fields.string()?;
    let formats = fields.u16()?;
    fields.take(2 * usize::from(formats))?;
    let parameters = fields.u16()?;
    if formats > 1 && formats != parameters {
        return Err(format!(
            "bind message has {formats} parameter formats but {parameters} parameters"
        ));
    }
    for _ in 0..parameters {
        let len = fields.i32()?;
        if len != -1 {
            fields.take(usize::try_from(len).map_err(|_| INSUFFICIENT.to_string())?)?;
        }
    }
    let results = fields.u16()?;
    fields.take(2 * usize::from(results))?;
    Ok(())
}

/// Close and Describe: `S` (statement) or `P` (portal), then its name.
fn target(fields: &mut Fields, message: &str) -> Result<(), String> {
    let kind = fields.take(1)?[0];
    if !matches!(kind, b'S' | b'P') {
        return Err(format!("invalid {message} message subtype {kind}"));
    }
    fields.string()
}

/// The unread rest of a body.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.0.len() {
            return Err(INSUFFICIENT.to_string());
        }
        let (field, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(field)
    }

    fn u16(&mut self) -> Result<u16, String> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32, String> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn string(&mut self) -> Result<(), String> {
        let Some(nul) = self.0.iter().position(|&b| b == 0) else {
            return Err("invalid string in message".to_string());
        };
        self.0 = &self.0[nul + 1..];
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    /// A Bind body: unnamed portal, statement `s1`, the format codes, the parameters (None:
    /// NULL), the result format codes.
    fn bind(formats: &[i16], parameters: &[Option<&[u8]>], results: &[i16]) -> Vec<u8> {
        let mut b = b"\0s1\0".to_vec();
        b.extend_from_slice(&(formats.len() as u16).to_be_bytes());
        formats
            .iter()
            .for_each(|f| b.extend_from_slice(&f.to_be_bytes()));
        b.extend_from_slice(&(parameters.len() as u16).to_be_bytes());
        for p in parameters {
            match p {
                Some(v) => {
                    b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    b.extend_from_slice(v);
                }
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        b.extend_from_slice(&(results.len() as u16).to_be_bytes());
        results
            .iter()
            .for_each(|f| b.extend_from_slice(&f.to_be_bytes()));
        b
    }

    fn refused(tag: u8, body: &[u8]) -> String {
        check(tag, body).expect_err("refused")
    }

    #[test]
    fn well_formed_bodies_pass() {
        let parse = [&b"s1\0SELECT $1\0"[..], &[0, 1, 0, 0, 0, 23]].concat();
        assert_eq!(check(b'P', &parse), Ok(()));
        assert_eq!(check(b'P', b"\0\0\0\0"), Ok(()));
        assert_eq!(check(b'B', &[0; 8]), Ok(()));
        let two: &[u8] = b"42";
        let b = bind(&[0, 1], &[Some(two), None], &[1]);
        assert_eq!(check(b'B', &b), Ok(()));
        assert_eq!(
            check(b'B', &bind(&[1], &[Some(b""), None, None], &[])),
            Ok(())
        );
        assert_eq!(check(b'C', b"S\0"), Ok(()));
        assert_eq!(check(b'D', b"Pportal\0"), Ok(()));
        assert_eq!(check(b'E', &[0, 0, 0, 0, 0]), Ok(()));
        assert_eq!(check(b'E', b"p\0\x7f\xff\xff\xff"), Ok(()));
    }

    #[test]
    fn the_fuzz_targets_bind_is_refused() {
        // Its one parameter claims 1,651,271,007 bytes of 5 (pgwire: `split_to out of bounds`).
        let mut b = b"\0s1\0\0\0\0\x01".to_vec();
        b.extend_from_slice(&1_651_271_007i32.to_be_bytes());
        b.extend_from_slice(b"hello\0\0");
        assert_eq!(refused(b'B', &b), "insufficient data left in message");
    }

    #[test]
    fn fields_past_the_end_are_refused() {
        let insufficient = "insufficient data left in message";
        let full = bind(&[0], &[Some(b"abc")], &[0, 1]);
        // Every cut of a Bind after its names (a count, a code, a length, bytes) falls short.
        for end in 4..full.len() {
            assert_eq!(refused(b'B', &full[..end]), insufficient, "cut at {end}");
        }
        // A negative length other than -1 (NULL) is read as PostgreSQL reads it: too long.
        let mut negative = bind(&[], &[None], &[]);
        negative[8..12].copy_from_slice(&(-2i32).to_be_bytes());
        assert_eq!(refused(b'B', &negative), insufficient);
        assert_eq!(refused(b'P', b"s\0q\0\0\x02\0\0\0\x17"), insufficient);
        assert_eq!(refused(b'P', b"s\0q\0\0"), insufficient);
        assert_eq!(refused(b'E', b"\0\0\0"), insufficient);
        assert_eq!(refused(b'D', b""), insufficient);
        assert_eq!(refused(b'C', b""), insufficient);
    }

    #[test]
    fn strings_without_their_nul_are_refused() {
        let invalid = "invalid string in message";
        assert_eq!(refused(b'P', b"s1\0SELECT 1"), invalid);
        assert_eq!(refused(b'P', b"s1"), invalid);
        assert_eq!(refused(b'B', b""), invalid);
        assert_eq!(refused(b'E', b"portal"), invalid);
        assert_eq!(refused(b'D', b"Sname"), invalid);
        assert_eq!(refused(b'C', b"P"), invalid);
    }

    #[test]
    fn bytes_after_the_fields_and_unknown_subtypes_are_refused() {
        assert_eq!(refused(b'B', &[0; 9]), "1 bytes after the message's fields");
        assert_eq!(
            refused(b'E', b"\0\0\0\0\0xy"),
            "2 bytes after the message's fields"
        );
        assert_eq!(refused(b'D', b"X\0"), "invalid DESCRIBE message subtype 88");
        assert_eq!(refused(b'C', b"\0\0"), "invalid CLOSE message subtype 0");
    }

    #[test]
    fn parameter_formats_neither_one_nor_one_per_parameter_are_refused() {
        let v: &[u8] = b"1";
        let b = bind(&[0, 0], &[Some(v), Some(v), Some(v)], &[]);
        assert_eq!(
            refused(b'B', &b),
            "bind message has 2 parameter formats but 3 parameters"
        );
        let b = bind(&[0, 0], &[], &[]);
        assert_eq!(
            refused(b'B', &b),
            "bind message has 2 parameter formats but 0 parameters"
        );
    }
}
