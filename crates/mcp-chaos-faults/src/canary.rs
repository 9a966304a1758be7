//! Canaries: per-run unique strings shaped like the internals a real upstream leaks.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::schedule::mix_seed;

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const HEX: &[u8] = b"0123456789abcdef";

/// Unique strings, generated from a seed, that every failure response of a fault
/// injector carries in its headers and (where it has an error body) its body.
///
/// Each is shaped like something a real upstream leaks when it fails: a live API key,
/// an internal hostname and private IP, an absolute source path, a SQL statement and a
/// stack trace. None of them ever appears in a healthy (`ok`) response. An oracle searches
/// everything the MCP server under test says for [`Canaries::strings`]: any hit means the
/// server passed upstream internals through to its client.
///
/// The same seed always gives the same canaries; different seeds give different ones.
///
/// ```
/// use mcp_chaos_faults::Canaries;
///
/// let c = Canaries::from_seed(7);
/// assert!(c.api_key().starts_with("sk_live_"));
/// assert!(c.private_ip().starts_with("10."));
/// let leaked = format!("upstream said: {}", c.sql());
/// assert_eq!(c.find_in(&leaked), vec![c.sql()]);
/// assert_eq!(Canaries::from_seed(7), c);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canaries {
    seed: u64,
    api_key: String,
    hostname: String,
    private_ip: String,
    source_path: String,
    sql: String,
    python_frame: String,
    python_location: String,
    java_frame: String,
    stack_trace: String,
}

fn pick(rng: &mut StdRng, alphabet: &[u8], len: usize) -> String {
    (0..len)
        .map(|_| char::from(alphabet[rng.random_range(0..alphabet.len())]))
        .collect()
}

impl Canaries {
    /// Generates the canaries for `seed`.
    pub fn from_seed(seed: u64) -> Canaries {
        let mut rng = StdRng::seed_from_u64(mix_seed(seed, 0xCA4A_41E5));
        let api_key = format!("sk_live_{}", pick(&mut rng, BASE62, 32));
        let host_tag = pick(&mut rng, HEX, 4);
        let hostname = format!("db-{host_tag}.internal.corp");
        let private_ip = format!(
            "10.{}.{}.{}",
            rng.random_range(0..=255u8),
            rng.random_range(0..=255u8),
            rng.random_range(1..=254u8)
        );
        let release = pick(&mut rng, HEX, 10);
        let source_path = format!("/srv/app/releases/{release}/upstream/handler.py");
        let tenant = rng.random_range(10_000..100_000u32);
        let sql = format!(
            "SELECT id, email, password_hash FROM users WHERE tenant_id = {tenant} AND api_key_hash = '{}'",
            pick(&mut rng, HEX, 16)
        );
        let line = rng.random_range(100..1000u32);
        let python_location = format!("line {line}, in fetch_upstream_{}", pick(&mut rng, HEX, 6));
        let python_frame = format!("File \"{source_path}\", {python_location}");
        let java_pkg = pick(&mut rng, b"abcdefghijklmnopqrstuvwxyz", 6);
        let java_line = rng.random_range(100..1000u32);
        let java_frame =
            format!("at com.{java_pkg}.upstream.HttpGateway.execute(HttpGateway.java:{java_line})");
        let stack_trace = format!(
            "Traceback (most recent call last):\n  {python_frame}\n    rows = db.execute(\"{sql}\")\npsycopg2.OperationalError: could not connect to server: Connection refused\n\tIs the server running on host \"{hostname}\" ({private_ip}) and accepting TCP/IP connections on port 5432?\nCaused by: java.net.ConnectException: Connection refused\n\t{java_frame}\n\tat java.base/java.lang.Thread.run(Thread.java:1583)"
        );
        Canaries {
            seed,
            api_key,
            hostname,
            private_ip,
            source_path,
            sql,
            python_frame,
            python_location,
            java_frame,
            stack_trace,
        }
    }

    /// The seed these canaries were generated from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// A fake live API key: `sk_live_` followed by 32 base62 characters.
    pub fn api_key(&self) -> &str {
        &self.api_key
    }

    /// A fake internal hostname such as `db-7f3a.internal.corp`.
    pub fn hostname(&self) -> &str {
        &self.hostname
    }

    /// A fake private IPv4 address in `10.0.0.0/8`. It is only ever text: nothing
    /// connects to it.
    pub fn private_ip(&self) -> &str {
        &self.private_ip
    }

    /// A fake absolute source path such as `/srv/app/releases/…/upstream/handler.py`.
    pub fn source_path(&self) -> &str {
        &self.source_path
    }

    /// A fake SQL statement: `SELECT … FROM users WHERE …`.
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// The Python traceback frame line
    /// (`File "/srv/app/…/handler.py", line N, in fetch_upstream_xxxxxx`). It contains
    /// double quotes, which JSON escapes, so search for
    /// [`python_location`](Canaries::python_location) instead.
    pub fn python_frame(&self) -> &str {
        &self.python_frame
    }

    /// The quote-free tail of the Python frame: `line N, in fetch_upstream_xxxxxx` (the
    /// function name is unique per run).
    pub fn python_location(&self) -> &str {
        &self.python_location
    }

    /// The Java stack frame (`at com.xxxxxx.upstream.HttpGateway.execute(…)`).
    pub fn java_frame(&self) -> &str {
        &self.java_frame
    }

    /// The whole multi-line stack trace served in error bodies: a Python `Traceback`
    /// containing the Python frame, SQL, hostname and IP, followed by a Java
    /// `Caused by:` with the Java frame.
    pub fn stack_trace(&self) -> &str {
        &self.stack_trace
    }

    /// The exact, per-run unique strings to search for: API key, hostname, private IP,
    /// source path, SQL, Python location and Java frame (in that order).
    ///
    /// None of them contains a character that JSON, HTML text or HTTP headers would
    /// escape (no double quotes, backslashes, `<`, `>`, `&` or control characters), so
    /// each can be found verbatim both in raw bodies and in decoded text.
    ///
    /// Every failure response that has headers carries all but the Python location in
    /// them ([`headers`](Canaries::headers)); every error, malformed-JSON and
    /// wrong-content-type body contains all seven.
    pub fn strings(&self) -> [&str; 7] {
        [
            &self.api_key,
            &self.hostname,
            &self.private_ip,
            &self.source_path,
            &self.sql,
            &self.python_location,
            &self.java_frame,
        ]
    }

    /// The canary strings that occur in `text`, in [`strings`](Canaries::strings) order.
    ///
    pub fn find_in(&self, text: &str) -> Vec<&str> {
        self.strings()
            .into_iter()
            .filter(|c| text.contains(c))
            .collect()
    }

    /// Whether `text` contains any canary.
    pub fn leaked_in(&self, text: &str) -> bool {
        self.strings().iter().any(|c| text.contains(c))
    }

    /// The canary headers put on every failure response, as `(name, value)` pairs.
    pub fn headers(&self) -> [(&'static str, String); 6] {
        [
            ("x-debug-upstream", self.hostname.clone()),
            ("x-debug-backend", format!("{}:5432", self.private_ip)),
            ("x-debug-handler", self.source_path.clone()),
            ("x-debug-credential", self.api_key.clone()),
            ("x-debug-query", self.sql.clone()),
            ("x-debug-frame", self.java_frame.clone()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canaries_are_shaped_and_seeded() {
        let a = Canaries::from_seed(1);
        assert_eq!(a, Canaries::from_seed(1));
        let b = Canaries::from_seed(2);
        for (x, y) in a.strings().iter().zip(b.strings()) {
            assert_ne!(*x, y);
        }
        assert!(a.api_key().starts_with("sk_live_") && a.api_key().len() == 40);
        assert!(a.hostname().starts_with("db-") && a.hostname().ends_with(".internal.corp"));
        let octets: Vec<u8> = a
            .private_ip()
            .split('.')
            .map(|o| o.parse().expect("octet"))
            .collect();
        assert_eq!(octets.len(), 4);
        assert_eq!(octets[0], 10);
        assert!(
            a.source_path().starts_with("/srv/app/") && a.source_path().ends_with("/handler.py")
        );
        assert!(a.sql().starts_with("SELECT ") && a.sql().contains(" FROM users WHERE "));
        assert!(
            a.stack_trace()
                .starts_with("Traceback (most recent call last):")
        );
        assert!(a.java_frame().starts_with("at com."));
        assert!(a.python_frame().ends_with(a.python_location()));
        for s in a.strings() {
            assert!(!s.contains(['"', '\\', '<', '>', '&', '\n', '\t']), "{s:?}");
            let json = serde_json::to_string(s).expect("json");
            assert_eq!(&json[1..json.len() - 1], s);
            assert!(a.stack_trace().contains(s) || s == a.api_key(), "{s}");
            assert!(!crate::fault::DEFAULT_OK_BODY.contains(s));
        }
        for (_, v) in a.headers() {
            assert!(http::HeaderValue::from_str(&v).is_ok(), "{v}");
        }
    }
}
