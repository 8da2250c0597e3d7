//! The pipeline grammar must never panic, and what it accepts must survive
//! a dry-run plan and a round trip through the stored stage form.
#![no_main]

use clawdis_engine::pipeline::parse::{Stage, StageRecord, parse_pipeline};
use clawdis_engine::pipeline::dry_run_plan;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(stages) = parse_pipeline(text) {
        assert!(!stages.is_empty());
        let _ = dry_run_plan(&stages);
        for stage in &stages {
            let back = Stage::from(&StageRecord::from(stage));
            assert_eq!(&back.name, &stage.name);
            assert_eq!(back.args.positional, stage.args.positional);
        }
    }
});
