//! The workflow run loop and its policies: `when` conditions, gates in
//! order, `timeout_ms`, `retry` with backoff, and `on_error`. Running each
//! kind of step is [`super::steps`]'s; the gates' requests are
//! [`super::gates`]'.

use std::time::Duration;

use crate::context::{Ctx, Mode};
use crate::error::{Error, Failure, Result};
use crate::value::{Object, Value};

use super::condition;
use super::file::{Exec, OnError, Step};
use super::gates::{
    Gate, approval_request, check_identity, fit_input_request, prompt_input, read_line,
};
use super::state::{Attempt, BoxFuture, Outcome, Run, output_items, result, store_result};

/// Whether an error must bypass `on_error` and retries.
fn is_pipeline_halt(e: &Error) -> bool {
    e.failure == Failure::Halted
}

impl Run<'_> {
    /// Runs the steps from `start`, returning the outcome.
    pub fn run_from<'s>(
        &'s mut self,
        start: usize,
        ctx: &'s Ctx,
    ) -> BoxFuture<'s, Result<Outcome>> {
        Box::pin(async move {
            let steps = &self.workflow.steps;
            for (idx, step) in steps.iter().enumerate().skip(start) {
                let pipeline_step = matches!(step.exec, Exec::Gobby(_));
                let runs = if pipeline_step {
                    self.pipeline_condition(step, ctx)
                } else {
                    condition::evaluate(step.when.as_ref(), &self.results)?
                };
                if !runs {
                    if let Some(journal) = &ctx.journal {
                        journal.skipped(idx, &step.id);
                    }
                    let mut r = result(&step.id);
                    r.insert("skipped", Value::Bool(true));
                    self.results.insert(step.id.clone(), Value::Object(r));
                    continue;
                }
                // A pipeline step's gate comes before it runs (Gobby's).
                if let (true, Some(approval)) = (pipeline_step, &step.approval)
                    && self
                        .results
                        .get(&step.id)
                        .and_then(|r| r.get_key("approved"))
                        != Some(&Value::Bool(true))
                {
                    let approval = self.pipeline_gate(approval, ctx);
                    let (request, identity) = approval_request(step, &approval, &Value::Null, ctx);
                    if ctx.mode == Mode::Human && ctx.stdin_is_tty {
                        self.approve_on_terminal(step, &request, identity, ctx)
                            .await?;
                    } else {
                        return Ok(Outcome::Paused {
                            gate: Gate::Approval {
                                step_id: step.id.clone(),
                                request,
                                identity,
                            },
                            resume_at: idx,
                            results: self.results.clone(),
                        });
                    }
                }
                if let Some(input) = &step.input {
                    let subject = match &step.stdin {
                        Some(_) => self.input_value(step.stdin.as_ref(), &self.results)?,
                        None => Some(
                            self.last
                                .as_ref()
                                .and_then(|l| self.results.get(l))
                                .and_then(|r| {
                                    r.get_key("json")
                                        .or_else(|| r.get_key("response"))
                                        .or_else(|| r.get_key("stdout"))
                                })
                                .cloned()
                                .unwrap_or(Value::Null),
                        ),
                    };
                    let mut request = Object::new();
                    request.insert("type", Value::from("input_request"));
                    request.insert("prompt", Value::from(input.prompt.as_str()));
                    request.insert("responseSchema", input.response_schema.clone());
                    if let Some(d) = &input.defaults {
                        request.insert("defaults", d.clone());
                    }
                    if ctx.mode == Mode::Human && ctx.stdin_is_tty {
                        let response =
                            prompt_input(&input.prompt, &input.response_schema, &step.id, ctx)
                                .await?;
                        let mut r = result(&step.id);
                        if let Some(s) = subject {
                            r.insert("subject", s);
                        }
                        r.insert("response", response);
                        self.results.insert(step.id.clone(), Value::Object(r));
                        self.last = Some(step.id.clone());
                        continue;
                    }
                    let request = fit_input_request(request, subject.clone(), &step.id, ctx)?;
                    return Ok(Outcome::Paused {
                        gate: Gate::Input {
                            step_id: step.id.clone(),
                            request,
                            subject,
                        },
                        resume_at: idx + 1,
                        results: self.results.clone(),
                    });
                }

                match self.execute_recorded(idx, step, ctx).await {
                    Ok(Attempt::Asked { mut request, input }) => {
                        let subject = request.remove("subject");
                        let request = fit_input_request(request, subject.clone(), &step.id, ctx)?;
                        return Ok(Outcome::Paused {
                            gate: Gate::PipelineInput {
                                step_id: step.id.clone(),
                                request,
                                subject,
                                input,
                            },
                            resume_at: idx,
                            results: self.results.clone(),
                        });
                    }
                    Ok(Attempt::Done(r)) => {
                        store_result(&mut self.results, &step.id, r);
                        self.last = Some(step.id.clone());
                    }
                    Err(e) if is_pipeline_halt(&e) => return Err(e),
                    Err(e) => match step.on_error {
                        OnError::Stop => return Err(e),
                        OnError::Continue | OnError::SkipRest => {
                            let mut r = result(&step.id);
                            r.insert("error", Value::Bool(true));
                            r.insert("errorMessage", Value::from(e.message));
                            self.results.insert(step.id.clone(), Value::Object(r));
                            if step.on_error == OnError::SkipRest {
                                break;
                            }
                            continue;
                        }
                    },
                }

                if let (false, Some(approval)) = (pipeline_step, &step.approval) {
                    let step_result = self.results.get(&step.id).cloned().unwrap_or_default();
                    let (request, identity) = approval_request(step, approval, &step_result, ctx);
                    if let (Some(init), Some(Value::Object(r))) =
                        (identity.get("initiatedBy"), self.results.get(&step.id))
                    {
                        let mut r = r.clone();
                        r.insert("initiatedBy", init.clone());
                        self.results.insert(step.id.clone(), Value::Object(r));
                    }
                    if ctx.mode == Mode::Human && ctx.stdin_is_tty {
                        let approved_by = self
                            .approve_on_terminal(step, &request, identity, ctx)
                            .await?;
                        if let Some(Value::Object(r)) = self.results.get(&step.id).cloned() {
                            let mut r = r;
                            r.insert("approved", Value::Bool(true));
                            if let Some(by) = approved_by {
                                r.insert("approvedBy", Value::from(by));
                            }
                            self.results.insert(step.id.clone(), Value::Object(r));
                        }
                        continue;
                    }
                    return Ok(Outcome::Paused {
                        gate: Gate::Approval {
                            step_id: step.id.clone(),
                            request,
                            identity,
                        },
                        resume_at: idx + 1,
                        results: self.results.clone(),
                    });
                }
            }
            let last = self.last.as_ref().and_then(|l| self.results.get(l));
            Ok(Outcome::Done(match &self.workflow.pipeline {
                None => output_items(last),
                Some(pipeline) if !pipeline.outputs.is_empty() => {
                    vec![self.pipeline_outputs(&pipeline.outputs, ctx)?]
                }
                // A pipeline without `outputs` gives its last step's output.
                Some(_) => last
                    .map(crate::workflow::gobby::output_of)
                    .filter(|o| *o != Value::Null)
                    .into_iter()
                    .collect(),
            }))
        })
    }

    /// Asks on the terminal whether `step` is approved (`lobster run` in a
    /// terminal); who approved, from `LOBSTER_APPROVAL_APPROVED_BY`.
    async fn approve_on_terminal(
        &self,
        step: &Step,
        request: &Object,
        identity: Object,
        ctx: &Ctx,
    ) -> Result<Option<String>> {
        let prompt = request
            .get("prompt")
            .map(Value::to_js_string)
            .unwrap_or_default();
        ctx.stdout.write(&format!("{prompt} [y/N] "));
        let answer = read_line().await?;
        let answer = answer.trim().to_ascii_lowercase();
        if answer != "y" && answer != "yes" {
            return Err(Error::runtime("Not approved"));
        }
        let approved_by = ctx
            .env_var("LOBSTER_APPROVAL_APPROVED_BY")
            .map(|s| s.trim().to_string());
        check_identity(
            &step.id,
            Some(&Value::Object(identity)),
            approved_by.as_deref(),
        )?;
        Ok(approved_by)
    }

    /// [`Self::execute_with_policies`], recorded in the journal of a
    /// service run.
    async fn execute_recorded(&self, position: usize, step: &Step, ctx: &Ctx) -> Result<Attempt> {
        let Some(journal) = &ctx.journal else {
            return self.execute_with_policies(position, step, ctx).await;
        };
        journal.started(position, &step.id);
        let attempted = self.execute_with_policies(position, step, ctx).await;
        match &attempted {
            // A pipeline step's output is what its pipeline sees.
            Ok(Attempt::Done(r)) if matches!(step.exec, Exec::Gobby(_)) => {
                let output = crate::workflow::gobby::output_of(&Value::Object(r.clone()));
                journal.finished(position, &step.id, Ok(&output));
            }
            Ok(Attempt::Done(r)) => {
                journal.finished(position, &step.id, Ok(&Value::Object(r.clone())));
            }
            Ok(Attempt::Asked { .. }) => journal.waiting(position, &step.id),
            Err(e) => journal.finished(position, &step.id, Err(&e.message)),
        }
        attempted
    }

    /// One step with its timeout, retries and backoff.
    pub(super) fn execute_with_policies<'s>(
        &'s self,
        position: usize,
        step: &'s Step,
        ctx: &'s Ctx,
    ) -> BoxFuture<'s, Result<Attempt>> {
        Box::pin(async move {
            let max = step.retry.as_ref().map_or(1, |r| r.max.max(1));
            let mut attempt = 1;
            loop {
                if let Some(journal) = &ctx.journal {
                    journal.attempt(position, &step.id);
                }
                let outcome = match step.timeout_ms {
                    Some(ms) => {
                        tokio::time::timeout(Duration::from_millis(ms), self.execute(step, ctx))
                            .await
                            .unwrap_or_else(|_| {
                                Err(Error::failed(
                                    Failure::TimedOut,
                                    format!("Step '{}' timed out after {ms}ms", step.id),
                                ))
                            })
                    }
                    None => self.execute(step, ctx).await,
                };
                match outcome {
                    Ok(r) => return Ok(r),
                    Err(e) if attempt < max && !is_pipeline_halt(&e) => {
                        let delay = retry_delay(step, attempt);
                        say_retry(&step.id, attempt, max, &e.message, delay);
                        tokio::time::sleep(Duration::from_millis(delay.max(0.0) as u64)).await;
                        attempt += 1;
                    }
                    Err(e) => return Err(e),
                }
            }
        })
    }
}

/// Delay before retrying after failed attempt `attempt` (1-based), in whole ms.
fn retry_delay(step: &Step, attempt: u32) -> f64 {
    let Some(r) = &step.retry else { return 0.0 };
    let mut d = if r.exponential {
        (r.delay_ms * 2f64.powi(attempt as i32 - 1)).min(r.max_delay_ms)
    } else {
        r.delay_ms
    };
    if r.jitter {
        let unit = f64::from(uuid::Uuid::new_v4().as_bytes()[0]) / 255.0;
        d = (d + (unit * 2.0 - 1.0) * d * 0.1).min(r.max_delay_ms);
    }
    d.round().max(0.0)
}

/// Lobster's retry line on stderr, word for word.
#[expect(clippy::print_stderr, reason = "Lobster prints this line to stderr")]
fn say_retry(step: &str, attempt: u32, max: u32, message: &str, delay: f64) {
    eprintln!(
        "[RETRY] Step '{step}' failed (attempt {attempt}/{max}): {message}. Retrying in {}ms...",
        crate::value::format_number(delay)
    );
}
