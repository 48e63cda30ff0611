//! UTC timestamps as the reference writes them, from seconds since the Unix epoch (the edge reads
//! the clock): signature lines `YYYY-MM-DDTHH:MM:SSZ` (§10.1) and lockfile `generated_at`
//! `YYYY-MM-DDTHH:MM:SS.ffffff+00:00` (§10.7).

/// (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn parts(secs: i64) -> (i64, u32, u32, i64, i64, i64) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    (y, m, d, rem / 3600, rem % 3600 / 60, rem % 60)
}

/// `YYYY-MM-DDTHH:MM:SSZ` (signature lines).
pub fn signature_timestamp(secs: i64) -> String {
    let (y, mo, d, h, mi, s) = parts(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `YYYY-MM-DDTHH:MM:SS.ffffff+00:00` (Python's `datetime.now(timezone.utc).isoformat()`).
pub fn iso_timestamp(secs: i64, micros: u32) -> String {
    let (y, mo, d, h, mi, s) = parts(secs);
    format!(
        "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:06}+00:00",
        micros.min(999_999)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(signature_timestamp(0), "1970-01-01T00:00:00Z");
        // Seed 003's signing time.
        assert_eq!(signature_timestamp(1_772_088_170), "2026-02-26T06:42:50Z");
        assert_eq!(signature_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(
            iso_timestamp(1_700_000_000, 42),
            "2023-11-14T22:13:20.000042+00:00"
        );
    }
}
