//! Integers of every Rust width, floats and booleans.
//!
//! Integers are one bounded integer choice each (shrinking toward zero, or
//! toward the bound nearest zero). Floats use the engine's float schema, so
//! bounds, NaN and infinity follow Hypothesis' argument rules.

use super::{Generator, WireSchema};
use crate::test_case::{TestCase, usage_error};
use crate::transport::values;
use geist_engine::Value;
use geist_engine::choice::{FloatConstraints, IntegerConstraints, PreparedIntegerConstraints};
use geist_engine::generate::Schema;
use geist_wire::cbor::{self, Value as Cbor};
use std::fmt::Debug;
use std::marker::PhantomData;
use std::sync::OnceLock;

/// A Rust integer type [`integers`] can generate.
pub trait IntegerType: Copy + Debug + PartialOrd + Send + Sync + 'static {
    /// The smallest value of the type.
    const MIN: Self;
    /// The largest value of the type.
    const MAX: Self;
    /// The engine choice for zero (the simplest value).
    const ZERO_CHOICE: i128;
    /// The engine choice that represents `self` (order-preserving).
    fn to_choice(self) -> i128;
    /// The value an engine choice represents.
    fn from_choice(choice: i128) -> Self;
}

macro_rules! integer_type {
    ($($t:ty),*) => {$(
        impl IntegerType for $t {
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            const ZERO_CHOICE: i128 = 0;
            #[inline]
            fn to_choice(self) -> i128 {
                self as i128
            }
            #[inline]
            fn from_choice(choice: i128) -> Self {
                choice as $t
            }
        }
    )*};
}

integer_type!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, usize);

/// `u128` does not fit the engine's `i128` choices, so its values are shifted
/// down by 2^127 (an order-preserving bijection) and shrink toward the choice
/// that stands for zero.
impl IntegerType for u128 {
    const MIN: Self = u128::MIN;
    const MAX: Self = u128::MAX;
    const ZERO_CHOICE: i128 = i128::MIN;
    #[inline]
    fn to_choice(self) -> i128 {
        (self ^ (1 << 127)) as i128
    }
    #[inline]
    fn from_choice(choice: i128) -> Self {
        (choice as u128) ^ (1 << 127)
    }
}

/// Integers of type `T`, by default over the whole type.
#[derive(Clone, Copy, Debug)]
pub struct IntegerGenerator<T> {
    min: T,
    max: T,
}

/// Integers of type `T` (`i8` to `i128`, `u8` to `u128`, `isize`, `usize`).
pub fn integers<T: IntegerType>() -> IntegerGenerator<T> {
    IntegerGenerator {
        min: T::MIN,
        max: T::MAX,
    }
}

impl<T: IntegerType> IntegerGenerator<T> {
    /// Smallest value generated (inclusive).
    pub fn min_value(mut self, min: T) -> Self {
        self.min = min;
        self
    }

    /// Largest value generated (inclusive).
    pub fn max_value(mut self, max: T) -> Self {
        self.max = max;
        self
    }
}

impl<T: IntegerType> Generator for IntegerGenerator<T> {
    type Output = T;

    #[inline]
    fn generate(&self, tc: &mut TestCase) -> T {
        if self.min > self.max {
            usage_error(format!(
                "integers: max_value={:?} < min_value={:?}",
                self.max, self.min
            ));
        }
        let (min, max) = (self.min.to_choice(), self.max.to_choice());
        // Bounds that fit in an `i64` (every type's but the widest ones',
        // where the compiler drops the test) go to the engine in the form
        // it records, built here without a conversion: the same
        // constraints (`bounded_i64` shrinks toward zero, which is
        // `ZERO_CHOICE` for every type whose bounds fit).
        let v = match (i64::try_from(min), i64::try_from(max)) {
            (Ok(min), Ok(max)) if T::ZERO_CHOICE == 0 => {
                tc.choose_prepared_integer(&PreparedIntegerConstraints::bounded_i64(min, max))
            }
            _ => tc.choose_integer(IntegerConstraints {
                min: Some(min),
                max: Some(max),
                shrink_towards: T::ZERO_CHOICE,
            }),
        };
        T::from_choice(v)
    }

    fn wire_schema(&self) -> Option<WireSchema<'_, T>> {
        if self.min > self.max {
            // The usage error comes from the ordinary path.
            return None;
        }
        let c = IntegerConstraints {
            min: Some(self.min.to_choice()),
            max: Some(self.max.to_choice()),
            shrink_towards: T::ZERO_CHOICE,
        };
        Some(WireSchema::new(
            values::integer_schema(&c),
            Box::new(move |v| values::integer_choice(&c, v).map(T::from_choice)),
        ))
    }
}

/// A Rust float type [`floats`] can generate.
pub trait FloatType: Copy + Debug + Send + Sync + 'static {
    /// Bits of the type (32 or 64).
    const WIDTH: u8;
    /// The value of an engine float choice (exactly representable by construction).
    fn from_f64(v: f64) -> Self;
    /// The value as an engine float.
    fn to_f64(self) -> f64;
}

impl FloatType for f32 {
    const WIDTH: u8 = 32;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl FloatType for f64 {
    const WIDTH: u8 = 64;
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// Floats of type `T`; by default any value, NaN and infinities included.
#[derive(Clone, Debug)]
pub struct FloatGenerator<T> {
    min: Option<f64>,
    max: Option<f64>,
    allow_nan: Option<bool>,
    allow_infinity: Option<bool>,
    exclude_min: bool,
    exclude_max: bool,
    constraints: OnceLock<Result<FloatConstraints, String>>,
    width: PhantomData<T>,
}

/// Floats of type `T` (`f32` or `f64`). With bounds, NaN is excluded, and
/// infinities too when both bounds are given (Hypothesis' rules).
pub fn floats<T: FloatType>() -> FloatGenerator<T> {
    FloatGenerator {
        min: None,
        max: None,
        allow_nan: None,
        allow_infinity: None,
        exclude_min: false,
        exclude_max: false,
        constraints: OnceLock::new(),
        width: PhantomData,
    }
}

impl<T: FloatType> FloatGenerator<T> {
    fn changed(mut self) -> Self {
        self.constraints = OnceLock::new();
        self
    }

    /// Smallest value generated.
    pub fn min_value(mut self, min: T) -> Self {
        self.min = Some(min.to_f64());
        self.changed()
    }

    /// Largest value generated.
    pub fn max_value(mut self, max: T) -> Self {
        self.max = Some(max.to_f64());
        self.changed()
    }

    /// Whether NaN may be generated (only without bounds).
    pub fn allow_nan(mut self, allow: bool) -> Self {
        self.allow_nan = Some(allow);
        self.changed()
    }

    /// Whether infinities may be generated.
    pub fn allow_infinity(mut self, allow: bool) -> Self {
        self.allow_infinity = Some(allow);
        self.changed()
    }

    /// Whether `min_value` itself is excluded.
    pub fn exclude_min(mut self, exclude: bool) -> Self {
        self.exclude_min = exclude;
        self.changed()
    }

    /// Whether `max_value` itself is excluded.
    pub fn exclude_max(mut self, exclude: bool) -> Self {
        self.exclude_max = exclude;
        self.changed()
    }

    fn build(&self) -> Result<FloatConstraints, String> {
        let mut map = vec![
            (Value::text("type"), Value::text("float")),
            (Value::text("width"), Value::Integer(i128::from(T::WIDTH))),
            (Value::text("exclude_min"), Value::Bool(self.exclude_min)),
            (Value::text("exclude_max"), Value::Bool(self.exclude_max)),
        ];
        if let Some(min) = self.min {
            map.push((Value::text("min_value"), Value::Float(min)));
        }
        if let Some(max) = self.max {
            map.push((Value::text("max_value"), Value::Float(max)));
        }
        if let Some(allow) = self.allow_nan {
            map.push((Value::text("allow_nan"), Value::Bool(allow)));
        }
        if let Some(allow) = self.allow_infinity {
            map.push((Value::text("allow_infinity"), Value::Bool(allow)));
        }
        match Schema::parse(&Value::Map(map)) {
            Ok(Schema::Float(c)) => Ok(c),
            Ok(_) => Err("floats: the engine did not build a float schema".to_string()),
            Err(e) => Err(format!("floats: {e}")),
        }
    }
}

impl<T: FloatType> Generator for FloatGenerator<T> {
    type Output = T;

    #[inline]
    fn generate(&self, tc: &mut TestCase) -> T {
        match self.constraints.get_or_init(|| self.build()) {
            Ok(c) => T::from_f64(tc.choose_float(*c)),
            Err(message) => usage_error(message.clone()),
        }
    }

    fn wire_schema(&self) -> Option<WireSchema<'_, T>> {
        let c = *self
            .constraints
            .get_or_init(|| self.build())
            .as_ref()
            .ok()?;
        Some(WireSchema {
            requires: Vec::new(),
            schema: values::float_schema(&c),
            parse: Box::new(move |v| {
                let f = cbor::as_f64(v)?;
                values::float_permitted(&c, f).then(|| T::from_f64(f))
            }),
        })
    }
}

/// Booleans.
#[derive(Clone, Copy, Debug)]
pub struct BooleanGenerator {
    p: f64,
}

/// `true` or `false` (shrinking toward `false`).
pub fn booleans() -> BooleanGenerator {
    BooleanGenerator { p: 0.5 }
}

impl Generator for BooleanGenerator {
    type Output = bool;

    #[inline]
    fn generate(&self, tc: &mut TestCase) -> bool {
        tc.choose_boolean(self.p)
    }

    fn wire_schema(&self) -> Option<WireSchema<'_, bool>> {
        Some(WireSchema {
            requires: Vec::new(),
            schema: values::boolean_schema(self.p),
            parse: Box::new(|v| match v {
                Cbor::Bool(b) => Some(*b),
                _ => None,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u128_choices_preserve_order_and_round_trip() {
        for v in [0u128, 1, 2, u128::MAX / 2, u128::MAX / 2 + 1, u128::MAX] {
            assert_eq!(u128::from_choice(v.to_choice()), v);
        }
        assert!(0u128.to_choice() < 1u128.to_choice());
        assert!((u128::MAX / 2).to_choice() < (u128::MAX / 2 + 1).to_choice());
        assert_eq!(0u128.to_choice(), u128::ZERO_CHOICE);
    }

    #[test]
    fn float_options_are_validated() {
        let bad = floats::<f64>().min_value(2.0).max_value(1.0);
        assert!(bad.build().unwrap_err().contains("max_value < min_value"));
        let nan_with_bounds = floats::<f64>().min_value(0.0).allow_nan(true);
        assert!(nan_with_bounds.build().is_err());
        let c = floats::<f32>()
            .min_value(0.0)
            .max_value(1.0)
            .exclude_min(true)
            .build()
            .unwrap();
        assert!(c.min > 0.0 && c.width == 32);
    }
}
