//! Placeholder: see the module owner's issue.
