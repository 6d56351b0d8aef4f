//! End-to-end tests of the gateway over real sockets and real TLS.
