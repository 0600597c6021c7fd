//! The time every decision reads. Production uses the system clock; tests use a manual clock
//! they move forward, instead of rewriting timestamps in the database to travel in time.
//!
//! Nothing outside this file calls `Utc::now()` (a tidy test keeps it so): an expiry, a
//! throttle window or a retry schedule that read the system clock directly could not be tested
//! without waiting.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};

/// A source of the current time, cheap to clone; clones of a manual clock share its time.
#[derive(Clone, Debug)]
pub struct Clock(Source);

#[derive(Clone, Debug)]
enum Source {
    System,
    Manual(Arc<Mutex<DateTime<Utc>>>),
    Shifted(Arc<Mutex<Duration>>),
}

impl Clock {
    /// The system clock.
    pub fn system() -> Clock {
        Clock(Source::System)
    }

    /// A clock that stands at `start` until [`Clock::advance`] or [`Clock::set`] moves it.
    pub fn manual(start: DateTime<Utc>) -> Clock {
        Clock(Source::Manual(Arc::new(Mutex::new(start))))
    }

    /// The system clock plus an offset that [`Clock::advance`] grows: time runs as usual (so
    /// rows written one after another keep their order) and a test can jump ahead, past an
    /// expiry or a throttle window. The test kit's clock.
    pub fn shifted() -> Clock {
        Clock(Source::Shifted(Arc::new(Mutex::new(Duration::zero()))))
    }

    pub fn now(&self) -> DateTime<Utc> {
        match &self.0 {
            Source::System => Utc::now(),
            Source::Manual(at) => *lock(at),
            Source::Shifted(offset) => Utc::now() + *lock(offset),
        }
    }

    /// Moves a manual or shifted clock forward by `by`. The system clock cannot be moved: a
    /// call on it is a programming error and panics.
    pub fn advance(&self, by: Duration) {
        match &self.0 {
            Source::System => panic!("the system clock cannot be moved"),
            Source::Manual(at) => *lock(at) += by,
            Source::Shifted(offset) => *lock(offset) += by,
        }
    }

    /// Puts a manual clock at `at` (panics on the other clocks).
    pub fn set(&self, at: DateTime<Utc>) {
        match &self.0 {
            Source::Manual(current) => *lock(current) = at,
            _ => panic!("only a manual clock can be set"),
        }
    }
}

/// A poisoned lock still holds a valid time: a panic elsewhere cannot corrupt it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Default for Clock {
    fn default() -> Self {
        Clock::system()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_stands_still_until_moved_and_its_clones_share_it() {
        let start: DateTime<Utc> = "2026-11-02T09:20:00Z".parse().unwrap();
        let clock = Clock::manual(start);
        let clone = clock.clone();
        assert_eq!(clock.now(), start);
        clone.advance(Duration::minutes(5));
        assert_eq!(clock.now(), start + Duration::minutes(5));
        clock.set(start);
        assert_eq!(clone.now(), start);
    }

    #[test]
    fn a_shifted_clock_runs_with_the_system_clock_and_jumps_ahead() {
        let clock = Clock::shifted();
        let before = Utc::now();
        clock.advance(Duration::hours(13));
        let shifted = clock.now();
        assert!(shifted >= before + Duration::hours(13));
        assert!(shifted < Utc::now() + Duration::hours(13) + Duration::minutes(1));
        assert!(
            clock.clone().now() >= shifted,
            "clones share the offset and time runs on"
        );
    }

    #[test]
    fn the_system_clock_moves_on_its_own() {
        let clock = Clock::system();
        let before = clock.now();
        assert!(clock.now() >= before);
    }
}
