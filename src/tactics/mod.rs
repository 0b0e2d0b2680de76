//! Threat-space tactics.
