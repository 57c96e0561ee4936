//! Stateful testing: a state machine of rules run in generated sequences.
//!
//! A [`StateMachine`] lists rules (actions on a state, each with an optional
//! precondition) and invariants (checked after every step). Running it in a
//! test case draws a sequence of steps; a failing sequence shrinks like a
//! list (steps are deleted and simplified), and the failure report prints it
//! as a program, one rule call per line with the values it drew.
//!
//! ```
//! use geist::generators as gs;
//! use geist::stateful::StateMachine;
//! use geist::{Settings, TestCase, check};
//!
//! let machine = StateMachine::new()
//!     .rule("push", |stack: &mut Vec<u8>, tc: &mut TestCase| {
//!         let x = tc.draw(gs::integers::<u8>());
//!         stack.push(x);
//!     })
//!     .rule_when("pop", |stack| !stack.is_empty(), |stack, _tc| {
//!         stack.pop();
//!     })
//!     .invariant("bounded", |stack| assert!(stack.len() <= 50));
//! check(Settings::new().test_cases(50), |tc| machine.run(tc, Vec::new()));
//! ```

use crate::test_case::TestCase;
use geist_engine::data::Collection;

/// Span label of one step of a state machine.
const STEP: u64 = 0x6765_6973_7506;
/// Span label of a whole run of a state machine.
const PROGRAM: u64 = 0x6765_6973_7507;

type Precondition<S> = Box<dyn Fn(&S) -> bool + Send + Sync>;
type Action<S> = Box<dyn Fn(&mut S, &mut TestCase) + Send + Sync>;
type Check<S> = Box<dyn Fn(&S) + Send + Sync>;

struct Rule<S> {
    name: String,
    precondition: Option<Precondition<S>>,
    action: Action<S>,
}

/// Rules and invariants over a state of type `S`.
pub struct StateMachine<S> {
    rules: Vec<Rule<S>>,
    invariants: Vec<(String, Check<S>)>,
    max_steps: usize,
    average_steps: f64,
}

impl<S> Default for StateMachine<S> {
    fn default() -> Self {
        StateMachine::new()
    }
}

impl<S> StateMachine<S> {
    /// A machine with no rules, running at most 50 steps (about 10 on average).
    pub fn new() -> StateMachine<S> {
        StateMachine {
            rules: Vec::new(),
            invariants: Vec::new(),
            max_steps: 50,
            average_steps: 10.0,
        }
    }

    /// A rule that can always run.
    pub fn rule(
        mut self,
        name: &str,
        action: impl Fn(&mut S, &mut TestCase) + Send + Sync + 'static,
    ) -> Self {
        self.rules.push(Rule {
            name: name.to_string(),
            precondition: None,
            action: Box::new(action),
        });
        self
    }

    /// A rule that runs only in states where `precondition` holds.
    pub fn rule_when(
        mut self,
        name: &str,
        precondition: impl Fn(&S) -> bool + Send + Sync + 'static,
        action: impl Fn(&mut S, &mut TestCase) + Send + Sync + 'static,
    ) -> Self {
        self.rules.push(Rule {
            name: name.to_string(),
            precondition: Some(Box::new(precondition)),
            action: Box::new(action),
        });
        self
    }

    /// A check run on the initial state and after every step (it panics to fail).
    pub fn invariant(mut self, name: &str, check: impl Fn(&S) + Send + Sync + 'static) -> Self {
        self.invariants.push((name.to_string(), Box::new(check)));
        self
    }

    /// Most steps in one test case (default 50).
    pub fn max_steps(mut self, n: usize) -> Self {
        self.max_steps = n.max(1);
        self.average_steps = self.average_steps.min(n as f64);
        self
    }

    /// Runs a generated sequence of steps from `initial`. When no rule's
    /// precondition holds, the sequence ends there.
    pub fn run(&self, tc: &mut TestCase, initial: S) {
        let mut state = initial;
        self.check_invariants(&state);
        tc.start_span(PROGRAM);
        let mut steps = tc.new_collection(
            || Collection::with_average(0, self.max_steps, self.average_steps),
            0,
            Some(self.max_steps),
        );
        let mut enabled: Vec<usize> = Vec::with_capacity(self.rules.len());
        while tc.collection_more(&mut steps) {
            enabled.clear();
            enabled.extend(
                self.rules
                    .iter()
                    .enumerate()
                    .filter(|(_, rule)| rule.precondition.as_ref().is_none_or(|p| p(&state)))
                    .map(|(i, _)| i),
            );
            if enabled.is_empty() {
                break;
            }
            tc.start_span(STEP);
            let rule = &self.rules[enabled[tc.choose_index(enabled.len())]];
            tc.begin_step(&rule.name);
            (rule.action)(&mut state, tc);
            tc.end_step();
            tc.stop_span(false);
            self.check_invariants(&state);
        }
        tc.stop_span(false);
    }

    fn check_invariants(&self, state: &S) {
        for (_, check) in &self.invariants {
            check(state);
        }
    }
}

/// Values produced by some steps and used by later ones (a bundle): a step
/// adds a value, another draws or consumes one, chosen by index so that
/// shrinking prefers the earliest.
#[derive(Clone, Debug)]
pub struct Variables<T> {
    values: Vec<T>,
}

impl<T> Default for Variables<T> {
    fn default() -> Self {
        Variables::new()
    }
}

impl<T> Variables<T> {
    /// An empty pool.
    pub fn new() -> Variables<T> {
        Variables { values: Vec::new() }
    }

    /// Adds a value.
    pub fn add(&mut self, value: T) {
        self.values.push(value);
    }

    /// Whether the pool is empty (use it in preconditions).
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// A value of the pool (rejects the test case if it is empty).
    pub fn draw<'a>(&'a self, tc: &mut TestCase) -> &'a T {
        if self.values.is_empty() {
            tc.reject();
        }
        let i = tc.choose_index(self.values.len());
        tc.step_argument(format!("variable {i}"));
        &self.values[i]
    }

    /// Removes and returns a value of the pool (rejects the test case if it is empty).
    pub fn consume(&mut self, tc: &mut TestCase) -> T {
        if self.values.is_empty() {
            tc.reject();
        }
        let i = tc.choose_index(self.values.len());
        tc.step_argument(format!("variable {i}"));
        self.values.remove(i)
    }
}
