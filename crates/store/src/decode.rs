//! Turning stored column values into domain values for both SQL backends. Every failure is
//! [`StoreError::Corrupt`] naming the table, the row and the column — never a panic.

use std::fmt::Display;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::StoreError;
use super::rules;

/// Identifies the row being decoded, for error messages.
#[derive(Clone, Copy)]
pub(crate) struct At<'a> {
    pub(crate) table: &'static str,
    pub(crate) row: &'a (dyn Display + Sync),
}

impl At<'_> {
    fn corrupt(&self, column: &str, what: impl Display) -> StoreError {
        StoreError::corrupt(self.table, self.row, format_args!("column {column}: {what}"))
    }

    /// A text-stored enumeration.
    pub(crate) fn text_enum<T>(
        &self,
        column: &str,
        text: &str,
        parse: fn(&str) -> Option<T>,
    ) -> Result<T, StoreError> {
        parse(text).ok_or_else(|| self.corrupt(column, format_args!("unknown value {text:?}")))
    }

    /// JSON stored as text (SQLite).
    pub(crate) fn json_text<T: DeserializeOwned>(&self, column: &str, text: &str) -> Result<T, StoreError> {
        serde_json::from_str(text).map_err(|e| self.corrupt(column, format_args!("invalid JSON: {e}")))
    }

    /// Optional JSON stored as text (SQLite).
    pub(crate) fn opt_json_text<T: DeserializeOwned>(
        &self,
        column: &str,
        text: Option<&str>,
    ) -> Result<Option<T>, StoreError> {
        text.map(|text| self.json_text(column, text)).transpose()
    }

    /// JSON the database already parsed (Postgres `jsonb`) into a typed value.
    pub(crate) fn json_value<T: DeserializeOwned>(
        &self,
        column: &str,
        value: Value,
    ) -> Result<T, StoreError> {
        serde_json::from_value(value)
            .map_err(|e| self.corrupt(column, format_args!("unexpected JSON shape: {e}")))
    }

    /// A timestamp stored as microseconds (SQLite).
    pub(crate) fn micros(&self, column: &str, us: i64) -> Result<DateTime<Utc>, StoreError> {
        rules::from_micros(us)
            .ok_or_else(|| self.corrupt(column, format_args!("timestamp {us} out of range")))
    }

    /// A counter that must not be negative.
    pub(crate) fn unsigned(&self, column: &str, value: i64) -> Result<u64, StoreError> {
        u64::try_from(value).map_err(|_| self.corrupt(column, format_args!("negative value {value}")))
    }
}

/// Shorthand for building an [`At`].
pub(crate) fn at<'a>(table: &'static str, row: &'a (dyn Display + Sync)) -> At<'a> {
    At { table, row }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ThreadStatus;

    #[test]
    fn failures_name_table_row_and_column() {
        let id = "t-1";
        let row = at("threads", &id);
        let err = row
            .text_enum("status", "zombie", ThreadStatus::parse)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "corrupt stored data: threads row t-1: column status: unknown value \"zombie\""
        );
        let err = row.json_text::<Value>("state", "{not json").unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
        assert!(row.unsigned("token", -1).is_err());
        assert!(row.micros("at", i64::MAX).is_err());
    }
}
