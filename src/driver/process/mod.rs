//! Child-process supervision shared by the CLI drivers.
