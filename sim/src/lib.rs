//! Simulated SSD core for ssdpts. The FTL model lives in this crate; the
//! `python` feature exposes it to Python as `ssdpts._sim`.

#[cfg(feature = "python")]
mod python {
    use pyo3::prelude::*;

    #[pyfunction]
    fn version() -> &'static str {
        env!("CARGO_PKG_VERSION")
    }

    #[pymodule]
    fn _sim(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add_function(wrap_pyfunction!(version, m)?)?;
        Ok(())
    }
}
