//! The library's tests, on the stand-in driver: no GPU needed. Each test starts with
//! `cudrv_standin::install()?`, the one line that makes the stand-in cudrv's driver.

#[test]
fn adds_two_vectors() -> Result<(), Box<dyn std::error::Error>> {
    cudrv_standin::install()?;
    assert_eq!(vector_sum::add(&[1.0, 2.0, 3.0], &[10.0, 20.0, 30.0])?, [11.0, 22.0, 33.0]);
    Ok(())
}

#[test]
fn adds_vectors_longer_than_one_block() -> Result<(), Box<dyn std::error::Error>> {
    cudrv_standin::install()?;
    let a: Vec<f32> = (0..100_003).map(|i| i as f32).collect();
    let b: Vec<f32> = a.iter().map(|x| 2.0 * x).collect();
    let c = vector_sum::add(&a, &b)?;
    assert!(c.iter().enumerate().all(|(i, &v)| v == 3.0 * i as f32));
    Ok(())
}

#[test]
fn refuses_vectors_of_different_lengths() -> Result<(), Box<dyn std::error::Error>> {
    cudrv_standin::install()?;
    let err = vector_sum::add(&[1.0, 2.0], &[1.0]).unwrap_err();
    assert!(err.to_string().contains("1 values for 2 in a"), "{err}");
    // The driver is the stand-in, at the version `cudrv-matrix` (or the environment) chose.
    let wanted = std::env::var("CUDRV_STANDIN_VERSION").map_or(13050, |v| cudrv::version::parse(&v).unwrap());
    assert_eq!(cudrv::init()?.driver_version_code(), wanted);
    Ok(())
}
