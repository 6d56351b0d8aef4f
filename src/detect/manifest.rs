//! Dependency manifests: which packages a project declares, and the names they are imported by.
