//! Standard string formats: emails, URLs, domains, IP addresses, dates, times,
//! datetimes and UUIDs.
//!
//! These follow Hypothesis' strategies (`emails()`, `provisional.urls()` and
//! `domains()`, `ip_addresses()`, `dates()`, `times()`, `datetimes()`,
//! `uuids()`) and render values the way Python's `str()` / `isoformat()` do,
//! since that is what a Hegel client sees from the reference server. Every
//! part is built from choices that shrink toward a simple value: `A.com`,
//! `0.0.0.0`, `::`, `2000-01-01`, `00:00:00`, a UUID of zeros.

use super::schema::SchemaError;
use crate::charset::CharSet;
use crate::choice::{IntegerConstraints, SizeConstraints};
use crate::data::{Collection, StopTest, TestData};
use crate::value::Value;
use std::fmt::Write as _;
use std::sync::Arc;

/// Span label around one domain label.
const DOMAIN_LABEL_SPAN: u64 = 0x6765_6973_7420;
/// Span label around one structured part (an address, a date, a URL piece).
const FORMAT_PART_SPAN: u64 = 0x6765_6973_7421;

/// Real top-level domains from the IANA root zone: `com` first (the simplest),
/// then by length, so shrinking reaches `com` and short TLDs fit short limits.
const TOP_LEVEL_DOMAINS: &[&str] = &[
    "com",
    "ai",
    "au",
    "br",
    "ca",
    "ch",
    "cn",
    "co",
    "de",
    "es",
    "fr",
    "in",
    "io",
    "it",
    "jp",
    "me",
    "nl",
    "no",
    "nz",
    "ru",
    "se",
    "tv",
    "uk",
    "us",
    "app",
    "biz",
    "dev",
    "edu",
    "gov",
    "int",
    "mil",
    "net",
    "org",
    "xyz",
    "blog",
    "cafe",
    "info",
    "mobi",
    "name",
    "shop",
    "tech",
    "museum",
    "online",
    "travel",
    "academy",
    "company",
    "network",
    "systems",
    "xn--p1ai",
    "international",
];

/// Characters of an email local part (RFC 5322 `atext`), as Hypothesis uses.
const EMAIL_LOCAL_CHARACTERS: &str =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=^_`{|}~";

/// Characters left as they are in URL paths (everything else is %-encoded).
const URL_SAFE_CHARACTERS: &str =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789$-_.+!*'(),~";

/// Python's `string.printable`, the source of URL path text.
const PRINTABLE_CHARACTERS: &str = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \t\n\r\x0b\x0c";

/// IPv4 special-purpose networks (IANA registry), sampled to reach addresses
/// that plain random octets almost never hit.
const SPECIAL_IPV4_NETWORKS: &[([u8; 4], u32)] = &[
    ([0, 0, 0, 0], 8),
    ([10, 0, 0, 0], 8),
    ([100, 64, 0, 0], 10),
    ([127, 0, 0, 0], 8),
    ([169, 254, 0, 0], 16),
    ([172, 16, 0, 0], 12),
    ([192, 0, 0, 0], 24),
    ([192, 0, 2, 0], 24),
    ([192, 88, 99, 0], 24),
    ([192, 168, 0, 0], 16),
    ([198, 18, 0, 0], 15),
    ([198, 51, 100, 0], 24),
    ([203, 0, 113, 0], 24),
    ([224, 0, 0, 0], 4),
    ([240, 0, 0, 0], 4),
    ([255, 255, 255, 255], 32),
];

/// IPv6 special-purpose networks (IANA registry, plus link-local and multicast).
const SPECIAL_IPV6_NETWORKS: &[(u128, u32)] = &[
    (1, 128),
    (0, 128),
    (0xffff_0000_0000, 96),
    (0x0064_ff9b_0000_0000_0000_0000_0000_0000, 96),
    (0x0100_0000_0000_0000_0000_0000_0000_0000, 64),
    (0x2001_0000_0000_0000_0000_0000_0000_0000, 23),
    (0x2001_0db8_0000_0000_0000_0000_0000_0000, 32),
    (0x2002_0000_0000_0000_0000_0000_0000_0000, 16),
    (0xfc00_0000_0000_0000_0000_0000_0000_0000, 7),
    (0xfe80_0000_0000_0000_0000_0000_0000_0000, 10),
    (0xff00_0000_0000_0000_0000_0000_0000_0000, 8),
];

/// A format schema.
#[derive(Clone, Debug)]
pub enum FormatSchema {
    /// An email address: RFC 5322 addr-spec with a dot-atom local part.
    Email(Domains),
    /// An `http` or `https` URL (RFC 3986).
    Url(Domains),
    /// A domain name (RFC 1035).
    Domain(Domains),
    /// An IP address of the given version (either when `None`).
    IpAddress(Option<IpVersion>),
    /// An ISO 8601 date, `YYYY-MM-DD`.
    Date,
    /// An ISO 8601 time, `HH:MM:SS[.ffffff]`.
    Time,
    /// An ISO 8601 datetime, `YYYY-MM-DDTHH:MM:SS[.ffffff]`.
    DateTime,
    /// A UUID of the given version (1 to 5; any of them when `None`).
    Uuid(Option<u8>),
}

/// An IP address family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpVersion {
    /// IPv4, dotted quad.
    V4,
    /// IPv6, compressed as Python's `str(IPv6Address)`.
    V6,
}

/// How to build domain names (shared by domains, emails and URLs).
#[derive(Clone, Debug)]
pub struct Domains {
    max_length: usize,
    max_element_length: usize,
    label_first: Arc<CharSet>,
    label_middle: Arc<CharSet>,
    label_last: Arc<CharSet>,
    email_local: Arc<CharSet>,
    url_path_characters: Arc<CharSet>,
}

fn int_field(map: &Value, key: &str) -> Result<Option<i128>, SchemaError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Integer(i)) => Ok(Some(*i)),
        Some(Value::Float(f)) if f.fract() == 0.0 && f.abs() < 1e30 => Ok(Some(*f as i128)),
        Some(other) => Err(SchemaError::new(format!(
            "{key} must be an integer, got {}",
            other.type_name()
        ))),
    }
}

fn bounded_field(
    map: &Value,
    key: &str,
    range: std::ops::RangeInclusive<i128>,
) -> Result<Option<i128>, SchemaError> {
    match int_field(map, key)? {
        Some(v) if !range.contains(&v) => Err(SchemaError::new(format!(
            "{key} must be between {} and {}, got {v}",
            range.start(),
            range.end()
        ))),
        other => Ok(other),
    }
}

fn charset_of(chars: &str) -> Arc<CharSet> {
    Arc::new(CharSet::from_intervals(
        chars.chars().map(|c| (c as u32, c as u32)).collect(),
    ))
}

impl FormatSchema {
    /// Parses a format schema of type `kind`; `Ok(None)` if `kind` is not a format.
    pub fn parse(kind: &str, map: &Value) -> Result<Option<FormatSchema>, SchemaError> {
        Ok(Some(match kind {
            "email" => FormatSchema::Email(Domains::new(255, 63)),
            "url" => FormatSchema::Url(Domains::new(255, 63)),
            "domain" => {
                let max_length = bounded_field(map, "max_length", 4..=255)?.unwrap_or(255);
                let element = bounded_field(map, "max_element_length", 1..=63)?.unwrap_or(63);
                FormatSchema::Domain(Domains::new(max_length as usize, element as usize))
            }
            "ipv4" => FormatSchema::IpAddress(Some(IpVersion::V4)),
            "ipv6" => FormatSchema::IpAddress(Some(IpVersion::V6)),
            "ip_address" => FormatSchema::IpAddress(match int_field(map, "version")? {
                None => None,
                Some(4) => Some(IpVersion::V4),
                Some(6) => Some(IpVersion::V6),
                Some(v) => {
                    return Err(SchemaError::new(format!("version must be 4 or 6, got {v}")));
                }
            }),
            "date" => FormatSchema::Date,
            "time" => FormatSchema::Time,
            "datetime" => FormatSchema::DateTime,
            "uuid" => FormatSchema::Uuid(bounded_field(map, "version", 1..=5)?.map(|v| v as u8)),
            _ => return Ok(None),
        }))
    }

    /// Generates a value.
    pub fn generate(&self, data: &mut TestData) -> Result<Value, StopTest> {
        let text = match self {
            FormatSchema::Email(domains) => email(domains, data)?,
            FormatSchema::Url(domains) => url(domains, data)?,
            FormatSchema::Domain(domains) => domains.generate(data, domains.max_length)?,
            FormatSchema::IpAddress(version) => {
                let version = match version {
                    Some(v) => *v,
                    None if data.draw_integer(IntegerConstraints::bounded(0, 1))? == 0 => {
                        IpVersion::V4
                    }
                    None => IpVersion::V6,
                };
                match version {
                    IpVersion::V4 => ipv4(data)?,
                    IpVersion::V6 => ipv6(data)?,
                }
            }
            FormatSchema::Date => date(data)?,
            FormatSchema::Time => time(data)?,
            FormatSchema::DateTime => {
                let mut out = date(data)?;
                out.push('T');
                out.push_str(&time(data)?);
                out
            }
            FormatSchema::Uuid(version) => uuid(*version, data)?,
        };
        Ok(Value::text(&text))
    }
}

impl Domains {
    /// Domains of at most `max_length` characters (4..=255) whose labels have
    /// at most `max_element_length` characters (1..=63).
    fn new(max_length: usize, max_element_length: usize) -> Domains {
        let letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let letters_digits = format!("{letters}0123456789");
        Domains {
            max_length,
            max_element_length,
            label_first: charset_of(letters),
            label_middle: charset_of(&format!("{letters_digits}-")),
            label_last: charset_of(&letters_digits),
            email_local: charset_of(EMAIL_LOCAL_CHARACTERS),
            url_path_characters: charset_of(PRINTABLE_CHARACTERS),
        }
    }

    fn one_of(&self, class: &Arc<CharSet>, data: &mut TestData) -> Result<char, StopTest> {
        let c = data.draw_string(
            class.clone(),
            SizeConstraints {
                min_size: 1,
                max_size: 1,
            },
        )?;
        Ok(c.first().and_then(|c| char::from_u32(*c)).unwrap_or('a'))
    }

    /// One label of at most `max` characters, shaped like Hypothesis' label
    /// regex `[a-zA-Z]([a-zA-Z0-9-]{0,max-2}[a-zA-Z0-9])?`.
    fn label(&self, data: &mut TestData, max: usize) -> Result<String, StopTest> {
        data.start_span(DOMAIN_LABEL_SPAN);
        let mut label = String::new();
        label.push(self.one_of(&self.label_first, data)?);
        if max >= 2 {
            let mut tail = Collection::new(0, Some(1));
            while tail.more(data)? {
                let middle = data.draw_string(
                    self.label_middle.clone(),
                    SizeConstraints {
                        min_size: 0,
                        max_size: max - 2,
                    },
                )?;
                label.extend(middle.iter().filter_map(|c| char::from_u32(*c)));
                label.push(self.one_of(&self.label_last, data)?);
            }
        }
        data.stop_span(false);
        Ok(label)
    }

    /// A domain of at most `max_length` characters: a TLD (random case, like
    /// Hypothesis) under one or more labels, each bounded by the room left.
    fn generate(&self, data: &mut TestData, max_length: usize) -> Result<String, StopTest> {
        data.start_span(FORMAT_PART_SPAN);
        let eligible: Vec<&str> = TOP_LEVEL_DOMAINS
            .iter()
            .copied()
            .filter(|tld| tld.len() + 2 <= max_length)
            .collect();
        if eligible.is_empty() {
            return Err(data.reject());
        }
        let i = data.draw_integer(IntegerConstraints::bounded(0, eligible.len() as i128 - 1))?;
        // The case of each letter is a bit of one choice, so that shrinking
        // toward a shorter TLD keeps the label choices that follow in place.
        let tld = eligible[i as usize];
        let mask = data.draw_integer(IntegerConstraints::bounded(0, (1 << tld.len()) - 1))?;
        let domain_tld: String = tld
            .chars()
            .enumerate()
            .map(|(k, c)| {
                if (mask >> k) & 1 == 1 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect();
        let mut domain = domain_tld;
        let mut labels = Collection::with_average(1, 126, 3.0);
        while domain.len() + 2 <= max_length && labels.more(data)? {
            let room = (max_length - domain.len() - 1).min(self.max_element_length);
            let mut longer = self.label(data, room)?;
            longer.push('.');
            longer.push_str(&domain);
            domain = longer;
        }
        data.stop_span(false);
        Ok(domain)
    }
}

/// `local@domain`, at most 254 characters (Hypothesis' `emails()`).
fn email(domains: &Domains, data: &mut TestData) -> Result<String, StopTest> {
    let local = data.draw_string(
        domains.email_local.clone(),
        SizeConstraints {
            min_size: 1,
            max_size: 64,
        },
    )?;
    let mut out: String = local.iter().filter_map(|c| char::from_u32(*c)).collect();
    out.push('@');
    // Bounding the domain keeps the address within 254 characters without
    // retries (the local part is at most 64 ASCII characters, so room >= 189).
    let room = 254 - out.len();
    out.push_str(&domains.generate(data, room)?);
    Ok(out)
}

fn percent_encode(out: &mut String, c: u32) {
    let _ = write!(out, "%{c:02X}");
}

/// `scheme://domain[:port]/path[#fragment]` (Hypothesis' `urls()`).
fn url(domains: &Domains, data: &mut TestData) -> Result<String, StopTest> {
    let scheme = ["http", "https"][data.draw_integer(IntegerConstraints::bounded(0, 1))? as usize];
    let mut out = format!("{scheme}://{}", domains.generate(data, 255)?);
    if data.draw_boolean(0.5)? {
        let port = data.draw_integer(IntegerConstraints::bounded(0, 65535))?;
        let _ = write!(out, ":{port}");
    }
    out.push('/');
    data.start_span(FORMAT_PART_SPAN);
    let mut segments = Collection::new(0, None);
    let mut first = true;
    while segments.more(data)? {
        let segment = data.draw_string(
            domains.url_path_characters.clone(),
            SizeConstraints {
                min_size: 0,
                max_size: usize::MAX,
            },
        )?;
        if !first {
            out.push('/');
        }
        first = false;
        for c in segment {
            match char::from_u32(c) {
                Some(ch) if URL_SAFE_CHARACTERS.contains(ch) => out.push(ch),
                _ => percent_encode(&mut out, c),
            }
        }
    }
    data.stop_span(false);
    if data.draw_boolean(0.5)? {
        data.start_span(FORMAT_PART_SPAN);
        out.push('#');
        let latin1 = Arc::new(CharSet::from_intervals(vec![(0, 0xFF)]));
        let mut characters = Collection::new(1, None);
        while characters.more(data)? {
            let c = data.draw_string(
                latin1.clone(),
                SizeConstraints {
                    min_size: 1,
                    max_size: 1,
                },
            )?[0];
            let encode = data.draw_boolean(0.5)?;
            match char::from_u32(c) {
                Some(ch)
                    if !encode && (URL_SAFE_CHARACTERS.contains(ch) || ch == '?' || ch == '/') =>
                {
                    out.push(ch)
                }
                _ => percent_encode(&mut out, c),
            }
        }
        data.stop_span(false);
    }
    Ok(out)
}

/// An address from a special-purpose network, or (as often) any address.
fn ipv4(data: &mut TestData) -> Result<String, StopTest> {
    data.start_span(FORMAT_PART_SPAN);
    let octets = if data.draw_integer(IntegerConstraints::bounded(0, 1))? == 0 {
        let mut octets = [0u8; 4];
        for octet in &mut octets {
            *octet = data.draw_integer(IntegerConstraints::bounded(0, 255))? as u8;
        }
        octets
    } else {
        let last = SPECIAL_IPV4_NETWORKS.len() as i128 - 1;
        let (base, prefix) = SPECIAL_IPV4_NETWORKS
            [data.draw_integer(IntegerConstraints::bounded(0, last))? as usize];
        let host_bits = 32 - prefix;
        let host = data.draw_integer(IntegerConstraints::bounded(0, (1i128 << host_bits) - 1))?;
        (u32::from_be_bytes(base) | host as u32).to_be_bytes()
    };
    data.stop_span(false);
    let [a, b, c, d] = octets;
    Ok(format!("{a}.{b}.{c}.{d}"))
}

fn ipv6(data: &mut TestData) -> Result<String, StopTest> {
    data.start_span(FORMAT_PART_SPAN);
    let mut groups = [0u16; 8];
    if data.draw_integer(IntegerConstraints::bounded(0, 1))? == 0 {
        for group in &mut groups {
            *group = data.draw_integer(IntegerConstraints::bounded(0, 0xFFFF))? as u16;
        }
    } else {
        let last = SPECIAL_IPV6_NETWORKS.len() as i128 - 1;
        let (base, prefix) = SPECIAL_IPV6_NETWORKS
            [data.draw_integer(IntegerConstraints::bounded(0, last))? as usize];
        let host_bits = 128 - prefix;
        let host = if host_bits == 0 {
            0
        } else {
            data.draw_integer(IntegerConstraints::bounded(0, (1i128 << host_bits) - 1))? as u128
        };
        let address = base | host;
        for (k, group) in groups.iter_mut().enumerate() {
            *group = (address >> (112 - 16 * k)) as u16;
        }
    }
    data.stop_span(false);
    Ok(format_ipv6(&groups))
}

/// Python's `str(IPv6Address)`: lowercase hex without leading zeros, the
/// first longest run of two or more zero groups replaced by `::`. (Like
/// Python before 3.13, IPv4-mapped addresses stay in hex: `::ffff:102:304`.)
pub fn format_ipv6(groups: &[u16; 8]) -> String {
    let (mut best_start, mut best_len) = (0, 0);
    let mut i = 0;
    while i < 8 {
        if groups[i] == 0 {
            let start = i;
            while i < 8 && groups[i] == 0 {
                i += 1;
            }
            if i - start > best_len {
                (best_start, best_len) = (start, i - start);
            }
        } else {
            i += 1;
        }
    }
    let join = |part: &[u16]| {
        part.iter()
            .map(|g| format!("{g:x}"))
            .collect::<Vec<_>>()
            .join(":")
    };
    if best_len < 2 {
        join(groups)
    } else {
        format!(
            "{}::{}",
            join(&groups[..best_start]),
            join(&groups[best_start + best_len..])
        )
    }
}

fn is_leap_year(year: i128) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Days in `month` of `year` (proleptic Gregorian, as Python's `datetime`).
fn days_in_month(year: i128, month: i128) -> i128 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `YYYY-MM-DD` for years 1 to 9999, shrinking toward 2000-01-01 like Hypothesis.
fn date(data: &mut TestData) -> Result<String, StopTest> {
    data.start_span(FORMAT_PART_SPAN);
    let year = data.draw_integer(IntegerConstraints {
        min: Some(1),
        max: Some(9999),
        shrink_towards: 2000,
    })?;
    let month = data.draw_integer(IntegerConstraints::bounded(1, 12))?;
    let day = data.draw_integer(IntegerConstraints::bounded(1, days_in_month(year, month)))?;
    data.stop_span(false);
    Ok(format!("{year:04}-{month:02}-{day:02}"))
}

/// `HH:MM:SS`, with `.ffffff` only when the microseconds are not zero (Python's `isoformat`).
fn time(data: &mut TestData) -> Result<String, StopTest> {
    data.start_span(FORMAT_PART_SPAN);
    let hour = data.draw_integer(IntegerConstraints::bounded(0, 23))?;
    let minute = data.draw_integer(IntegerConstraints::bounded(0, 59))?;
    let second = data.draw_integer(IntegerConstraints::bounded(0, 59))?;
    let microsecond = data.draw_integer(IntegerConstraints::bounded(0, 999_999))?;
    data.stop_span(false);
    let mut out = format!("{hour:02}:{minute:02}:{second:02}");
    if microsecond != 0 {
        let _ = write!(out, ".{microsecond:06}");
    }
    Ok(out)
}

/// A lowercase hyphenated UUID with the RFC 4122 variant and the given version
/// (without one: versions 1 to 5, shrinking toward 4).
fn uuid(version: Option<u8>, data: &mut TestData) -> Result<String, StopTest> {
    data.start_span(FORMAT_PART_SPAN);
    let version = match version {
        Some(v) => u64::from(v),
        None => data.draw_integer(IntegerConstraints {
            min: Some(1),
            max: Some(5),
            shrink_towards: 4,
        })? as u64,
    };
    let word = IntegerConstraints::bounded(0, i128::from(u64::MAX));
    let high = data.draw_integer(word)? as u64;
    let low = data.draw_integer(word)? as u64;
    data.stop_span(false);
    let high = (high & !0xF000) | (version << 12);
    let low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    Ok(format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xFFFF,
        high & 0xFFFF,
        low >> 48,
        low & 0xFFFF_FFFF_FFFF
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DEFAULT_MAX_CHOICES;
    use crate::random::Source;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn schema(kind: &str, fields: Vec<(&str, Value)>) -> FormatSchema {
        let mut entries = vec![(Value::text("type"), Value::text(kind))];
        entries.extend(fields.into_iter().map(|(k, v)| (Value::text(k), v)));
        FormatSchema::parse(kind, &Value::Map(entries))
            .unwrap()
            .unwrap()
    }

    /// Values from `n` seeds (rejected test cases are skipped, but must be rare).
    fn generate_many(format: &FormatSchema, n: u64) -> Vec<String> {
        let mut out = Vec::new();
        for seed in 0..n {
            let mut data =
                TestData::generating(vec![], Source::from_seed(seed), DEFAULT_MAX_CHOICES);
            if let Ok(v) = format.generate(&mut data) {
                out.push(v.as_str().unwrap().to_string());
            }
        }
        assert!(out.len() as u64 > n * 9 / 10, "{} of {n}", out.len());
        out
    }

    fn minimal(format: &FormatSchema) -> String {
        let mut data = TestData::replaying(vec![], DEFAULT_MAX_CHOICES);
        format
            .generate(&mut data)
            .unwrap()
            .as_str()
            .unwrap()
            .to_string()
    }

    fn is_valid_domain(domain: &str, max_length: usize) -> bool {
        let labels: Vec<&str> = domain.split('.').collect();
        let tld = labels.last().unwrap_or(&"").to_ascii_lowercase();
        domain.len() <= max_length
            && labels.len() >= 2
            && TOP_LEVEL_DOMAINS.contains(&tld.as_str())
            && labels.iter().all(|label| {
                let bytes = label.as_bytes();
                (1..=63).contains(&bytes.len())
                    && bytes[0].is_ascii_alphabetic()
                    && bytes[bytes.len() - 1].is_ascii_alphanumeric()
                    && bytes
                        .iter()
                        .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
            })
    }

    #[test]
    fn domains_are_rfc_1035_names_within_max_length() {
        for max_length in [4usize, 5, 12, 40, 255] {
            let format = schema(
                "domain",
                vec![("max_length", Value::Integer(max_length as i128))],
            );
            for domain in generate_many(&format, 2000) {
                assert!(
                    is_valid_domain(&domain, max_length),
                    "{domain:?} ({max_length})"
                );
            }
        }
        let all = generate_many(&schema("domain", vec![]), 2000);
        assert!(all.iter().any(|d| d.split('.').count() >= 3));
        assert!(
            all.iter()
                .any(|d| d.chars().any(|c| c.is_ascii_uppercase()))
        );
        assert_eq!(minimal(&schema("domain", vec![])), "A.com");
    }

    #[test]
    fn domain_max_length_is_validated() {
        for bad in [3, 256, -1] {
            let map = Value::Map(vec![(Value::text("max_length"), Value::Integer(bad))]);
            let err = FormatSchema::parse("domain", &map).unwrap_err();
            assert!(
                err.message.contains("max_length must be between 4 and 255"),
                "{}",
                err.message
            );
        }
    }

    #[test]
    fn emails_are_addr_specs() {
        let format = schema("email", vec![]);
        for address in generate_many(&format, 3000) {
            let (local, domain) = address.rsplit_once('@').unwrap();
            assert!(address.len() <= 254, "{address}");
            assert!((1..=64).contains(&local.len()), "{address}");
            assert!(
                local.chars().all(|c| EMAIL_LOCAL_CHARACTERS.contains(c)),
                "{address}"
            );
            assert!(is_valid_domain(domain, 255), "{address}");
        }
        assert_eq!(minimal(&format), "0@A.com");
    }

    fn is_pchar_or(c: char, extra: &str) -> bool {
        c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@".contains(c) || extra.contains(c)
    }

    fn valid_percent_escapes(s: &str) -> bool {
        let bytes = s.as_bytes();
        bytes.iter().enumerate().all(|(i, b)| {
            *b != b'%'
                || (i + 2 < bytes.len()
                    && bytes[i + 1].is_ascii_hexdigit()
                    && bytes[i + 2].is_ascii_hexdigit())
        })
    }

    #[test]
    fn urls_are_http_urls_by_rfc_3986() {
        let format = schema("url", vec![]);
        let urls = generate_many(&format, 3000);
        for url in &urls {
            let rest = url
                .strip_prefix("http://")
                .or_else(|| url.strip_prefix("https://"))
                .unwrap_or_else(|| panic!("{url}"));
            let slash = rest.find('/').unwrap_or_else(|| panic!("{url}"));
            let (authority, path_and_fragment) = rest.split_at(slash);
            let host = match authority.split_once(':') {
                Some((host, port)) => {
                    assert!(port.parse::<u16>().is_ok(), "{url}");
                    host
                }
                None => authority,
            };
            assert!(is_valid_domain(host, 255), "{url}");
            let (path, fragment) = match path_and_fragment.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (path_and_fragment, None),
            };
            assert!(path.chars().all(|c| is_pchar_or(c, "/%")), "{url}");
            assert!(valid_percent_escapes(path), "{url}");
            if let Some(fragment) = fragment {
                assert!(!fragment.is_empty(), "{url}");
                assert!(fragment.chars().all(|c| is_pchar_or(c, "/?%")), "{url}");
                assert!(valid_percent_escapes(fragment), "{url}");
            }
        }
        assert!(urls.iter().any(|u| u.contains('%')));
        assert!(urls.iter().any(|u| u.contains('#')));
        assert_eq!(minimal(&format), "http://A.com/");
    }

    #[test]
    fn ip_addresses_parse_and_print_like_python() {
        let v4 = generate_many(&schema("ipv4", vec![]), 3000);
        for address in &v4 {
            let parsed: Ipv4Addr = address.parse().unwrap();
            assert_eq!(&parsed.to_string(), address);
        }
        assert!(v4.iter().any(|a| a.starts_with("127.")));
        let v6 = generate_many(&schema("ipv6", vec![]), 3000);
        for address in &v6 {
            let parsed: Ipv6Addr = address.parse().unwrap();
            // Rust prints IPv4-mapped addresses in dotted form; otherwise both are RFC 5952.
            if parsed.to_ipv4_mapped().is_none() {
                assert_eq!(&parsed.to_string(), address);
            }
            assert_eq!(format_ipv6(&parsed.segments()), *address);
        }
        assert!(v6.iter().any(|a| a.starts_with("fe80:")));
        // The forms Python 3.11's str(IPv6Address) gives.
        for (groups, python) in [
            ([0, 0, 0, 0, 0, 0xffff, 0x102, 0x304], "::ffff:102:304"),
            ([1, 0, 1, 0, 0, 1, 0, 0], "1:0:1::1:0:0"),
            ([0, 0, 1, 0, 0, 1, 0, 0], "::1:0:0:1:0:0"),
            ([1, 0, 2, 3, 4, 5, 6, 7], "1:0:2:3:4:5:6:7"),
            ([1, 0, 0, 0, 0, 0, 0, 0], "1::"),
            ([0; 8], "::"),
        ] {
            assert_eq!(format_ipv6(&groups), python);
        }
        let either = generate_many(&schema("ip_address", vec![]), 1000);
        assert!(either.iter().any(|a| a.contains('.')) && either.iter().any(|a| a.contains(':')));
        let only6 = schema("ip_address", vec![("version", Value::Integer(6))]);
        assert!(
            generate_many(&only6, 200)
                .iter()
                .all(|a| a.parse::<Ipv6Addr>().is_ok())
        );
        assert_eq!(minimal(&schema("ipv4", vec![])), "0.0.0.0");
        assert_eq!(minimal(&schema("ipv6", vec![])), "::");
        assert_eq!(minimal(&schema("ip_address", vec![])), "0.0.0.0");
        let map = Value::Map(vec![(Value::text("version"), Value::Integer(5))]);
        assert!(FormatSchema::parse("ip_address", &map).is_err());
    }

    fn number(s: &str) -> i128 {
        assert!(s.bytes().all(|b| b.is_ascii_digit()), "{s}");
        s.parse().unwrap()
    }

    fn check_date(s: &str) {
        let parts: Vec<&str> = s.split('-').collect();
        assert_eq!(parts.len(), 3, "{s}");
        assert_eq!(
            (parts[0].len(), parts[1].len(), parts[2].len()),
            (4, 2, 2),
            "{s}"
        );
        let (y, m, d) = (number(parts[0]), number(parts[1]), number(parts[2]));
        assert!((1..=9999).contains(&y) && (1..=12).contains(&m), "{s}");
        assert!(d >= 1 && d <= days_in_month(y, m), "{s}");
    }

    fn check_time(s: &str) {
        let (hms, micro) = match s.split_once('.') {
            Some((hms, micro)) => (hms, Some(micro)),
            None => (s, None),
        };
        let parts: Vec<&str> = hms.split(':').collect();
        assert_eq!(parts.len(), 3, "{s}");
        assert!(parts.iter().all(|p| p.len() == 2), "{s}");
        assert!(
            number(parts[0]) < 24 && number(parts[1]) < 60 && number(parts[2]) < 60,
            "{s}"
        );
        if let Some(micro) = micro {
            assert_eq!(micro.len(), 6, "{s}");
            assert_ne!(number(micro), 0, "{s}");
        }
    }

    #[test]
    fn dates_times_and_datetimes_are_python_isoformat() {
        let dates = generate_many(&schema("date", vec![]), 3000);
        dates.iter().for_each(|d| check_date(d));
        assert!(dates.iter().any(|d| d.starts_with('0')));
        let times = generate_many(&schema("time", vec![]), 3000);
        times.iter().for_each(|t| check_time(t));
        assert!(times.iter().any(|t| !t.contains('.')));
        for dt in generate_many(&schema("datetime", vec![]), 3000) {
            let (d, t) = dt.split_once('T').unwrap();
            check_date(d);
            check_time(t);
        }
        assert_eq!(minimal(&schema("date", vec![])), "2000-01-01");
        assert_eq!(minimal(&schema("time", vec![])), "00:00:00");
        assert_eq!(minimal(&schema("datetime", vec![])), "2000-01-01T00:00:00");
    }

    #[test]
    fn uuids_have_version_and_variant() {
        for version in [None, Some(1u8), Some(3), Some(4), Some(5)] {
            let fields = match version {
                Some(v) => vec![("version", Value::Integer(i128::from(v)))],
                None => vec![],
            };
            let format = schema("uuid", fields);
            let uuids = generate_many(&format, 1000);
            for u in &uuids {
                let groups: Vec<&str> = u.split('-').collect();
                let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
                assert_eq!(lengths, [8, 4, 4, 4, 12], "{u}");
                assert!(
                    u.chars()
                        .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c)),
                    "{u}"
                );
                let v = u.as_bytes()[14] - b'0';
                assert!((1..=5).contains(&v), "{u}");
                if let Some(expected) = version {
                    assert_eq!(v, expected, "{u}");
                }
                assert!("89ab".contains(u.as_bytes()[19] as char), "{u}");
            }
            let mut distinct = uuids.clone();
            distinct.sort();
            distinct.dedup();
            assert!(distinct.len() > 900);
        }
        assert_eq!(
            minimal(&schema("uuid", vec![])),
            "00000000-0000-4000-8000-000000000000"
        );
        assert_eq!(
            minimal(&schema("uuid", vec![("version", Value::Integer(1))])),
            "00000000-0000-1000-8000-000000000000"
        );
        let map = Value::Map(vec![(Value::text("version"), Value::Integer(6))]);
        assert!(FormatSchema::parse("uuid", &map).is_err());
    }

    #[test]
    fn unknown_kinds_are_not_formats() {
        assert!(
            FormatSchema::parse("integer", &Value::Map(vec![]))
                .unwrap()
                .is_none()
        );
    }
}
