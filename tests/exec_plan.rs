//! The execution plan is a pure value (§12.3, DESIGN.md "plan in the core, spawn at the edge"):
//! these tests plan tools of in-memory workspaces against in-memory machine facts and print the
//! plan without running anything.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value as Json, json};

use ryechain::analysis::verify::Policy;
use ryechain::exec::ExecutionPlan;
use ryechain::exec::facts::{Facts, Need};
use ryechain::exec::plan::{ExecRequest, Step, plan};
use ryechain::testing::{answer_as_empty_machine, exec_request, host};

fn request(item: &str, params: Json) -> ExecRequest {
    let Json::Object(params) = params else {
        panic!("params are an object")
    };
    exec_request(item, params)
}

fn answer(needs: &[Need], facts: &mut Facts) {
    answer_as_empty_machine(needs, facts);
}

fn plan_of(fixture: &str, req: &ExecRequest, env: &[(&str, &str)]) -> Result<ExecutionPlan, Json> {
    let host = host(fixture);
    let env: BTreeMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let mut facts = Facts::complete(env);
    for _ in 0..32 {
        match plan(host.analysis(), req, &facts) {
            Step::Need(needs) => answer(&needs, &mut facts),
            Step::Refused(r) => return Err(ryechain::render::exec::response(&r, None)),
            Step::DryRun(v) => return Err(ryechain::render::chain::dry_run(&v)),
            Step::Run(p) => return Ok(p.plan),
            Step::Http(p) => panic!("an HTTP plan: {:?}", p.plan),
        }
    }
    panic!("planning did not settle");
}

const SCRIPT_TOOL: &str = "//- /project/.ai/tools/t/echo.py
__version__ = \"1.0.0\"
__executor_id__ = \"rye/core/runtimes/python/script\"
";

#[test]
fn s12_3_python_script_plan_printed_without_running() {
    let req = request("t/echo", json!({"name": "Ada", "command": "ls"}));
    let plan = plan_of(
        SCRIPT_TOOL,
        &req,
        &[("PATH", "/usr/bin"), ("HOME", "/home/a")],
    )
    .expect("the chain plans");
    println!("{plan:#?}");
    // No `.venv` under the project: the interpreter falls back to `python3` (§5.4).
    assert_eq!(plan.program, "python3");
    assert_eq!(
        plan.args,
        [
            "/fixture/project/.ai/tools/t/echo.py",
            "--project-path",
            "/fixture/project"
        ]
    );
    // §8.5: the caller's `command` reaches the tool only through params_json on stdin.
    assert_eq!(
        plan.stdin.as_deref(),
        Some(br#"{"name": "Ada", "command": "ls"}"#.as_slice())
    );
    assert_eq!(
        plan.env.get("RYE_PYTHON").map(String::as_str),
        Some("python3")
    );
    assert_eq!(
        plan.env.get("PYTHONUNBUFFERED").map(String::as_str),
        Some("1")
    );
    assert_eq!(plan.env.get("HOME").map(String::as_str), Some("/home/a"));
    assert_eq!(plan.timeout, Duration::from_secs(300));
    assert_eq!(plan.cwd, None);
}

#[test]
fn a_venv_interpreter_is_found_through_path_facts() {
    let host = host(SCRIPT_TOOL);
    let req = request("t/echo", json!({}));
    let venv = PathBuf::from("/fixture/project/.venv/bin/python");
    let mut facts = Facts::complete(BTreeMap::new());
    let mut seen_venv_question = false;
    let plan = loop {
        match plan(host.analysis(), &req, &facts) {
            Step::Need(needs) => {
                seen_venv_question |= needs.contains(&Need::Path(venv.clone()));
                answer(&needs, &mut facts);
                if let Some(f) = facts.paths.get_mut(&venv) {
                    f.kind = ryechain::exec::facts::PathKind::File;
                    f.executable = true;
                    f.real = Some(venv.clone());
                }
            }
            Step::Run(p) => break p.plan,
            Step::Refused(r) => panic!("{r:?}"),
            Step::DryRun(v) => panic!("{v:?}"),
            Step::Http(p) => panic!("{:?}", p.plan),
        }
    };
    assert!(
        seen_venv_question,
        "the planner asks about the project's venv"
    );
    assert_eq!(plan.program, venv.display().to_string());
}

#[test]
fn refusals_name_the_reason() {
    let req = request("t/missing", json!({}));
    let err = plan_of(SCRIPT_TOOL, &req, &[]).expect_err("not found");
    assert_eq!(err["error"], "Tool not found: t/missing");
    assert_eq!(err["status"], "error");

    let req = request("../x", json!({}));
    let err = plan_of(SCRIPT_TOOL, &req, &[]).expect_err("hostile");
    assert!(
        err["error"]
            .as_str()
            .unwrap()
            .starts_with("Invalid item id")
    );

    let mut req = request("t/echo", json!({}));
    req.policy = Policy {
        allow_unsigned: false,
    };
    let err = plan_of(SCRIPT_TOOL, &req, &[]).expect_err("unsigned");
    assert_eq!(
        err["error"],
        "Unsigned item: /fixture/project/.ai/tools/t/echo.py"
    );
}

#[test]
fn validation_errors_refuse_naming_the_rule() {
    // A user runtime delegating to a project tool cannot be built (§1.7); a system tool naming a
    // user runtime is refused; here: a tool whose runtime declares inputs its child lacks.
    let fixture = "//- /project/.ai/tools/t/tool.py
__version__ = \"1.0.0\"
__executor_id__ = \"t/rt\"
OUTPUTS = [\"rows\"]
//- /project/.ai/tools/t/rt.yaml
version: \"1.0.0\"
tool_type: runtime
executor_id: rye/core/primitives/subprocess
inputs: [rows, columns]
config:
  command: echo
";
    let req = request("t/tool", json!({}));
    let err = plan_of(fixture, &req, &[]).expect_err("invalid chain");
    let text = err["error"].as_str().unwrap();
    assert!(text.starts_with("Chain validation failed: "), "{text}");
    assert!(text.contains("[unsatisfied-inputs]"), "{text}");
    assert_eq!(
        err["chain"],
        json!(["t/tool", "t/rt", "rye/core/primitives/subprocess"])
    );
}

#[test]
fn caller_cannot_change_what_is_spawned() {
    let fixture = "//- /project/.ai/tools/t/rt.yaml
version: \"1.0.0\"
tool_type: runtime
executor_id: rye/core/primitives/subprocess
config:
  command: /bin/echo
  args: [\"{tool_path}\", \"{greeting}\"]
  timeout: 5
//- /project/.ai/tools/t/tool.yaml
version: \"1.0.0\"
executor_id: t/rt
config:
  greeting: hello
";
    let req = request(
        "t/tool",
        json!({"command": "/bin/rm", "args": ["-rf", "/"], "env": {"LD_PRELOAD": "x"}, "greeting": "${HOME}"}),
    );
    let plan = plan_of(fixture, &req, &[("HOME", "/home/a")]).expect("plans");
    assert_eq!(plan.program, "/bin/echo");
    assert_eq!(
        plan.args,
        ["/fixture/project/.ai/tools/t/tool.yaml", "hello"]
    );
    assert!(!plan.env.contains_key("LD_PRELOAD"));
    assert_eq!(plan.timeout, Duration::from_secs(5));
    assert_eq!(plan.stdin, None, "no input_data: a null stdin");
}

/// A runtime whose config is the subprocess primitive's own (§9.1), for the scenarios of the
/// reference's subprocess tests that are about templating (in ryechain the config is templated
/// once, in the core, before the plan exists). The tool is a command: its own config names the
/// program, so the chain runs it without naming a tool file.
fn echo_runtime(args: &str, executor: &str) -> String {
    format!(
        "//- /project/.ai/tools/t/rt.yaml
version: \"1.0.0\"
tool_type: runtime
executor_id: {executor}
env_config:
  env:
    VAR1: \"${{VAR1:-default1}}\"
config:
  args: {args}
//- /project/.ai/tools/t/tool.yaml
version: \"1.0.0\"
executor_id: t/rt
config:
  command: echo
"
    )
}

#[test]
fn s14_36_env_defaults_in_args() {
    let fixture = echo_runtime(
        r#"["${MY_VAR:-default_value}", "${OTHER:-fallback}"]"#,
        "rye/core/primitives/subprocess",
    );
    let req = request("t/tool", json!({}));
    let plan = plan_of(&fixture, &req, &[("MY_VAR", "custom")]).expect("plans");
    assert_eq!(plan.args, ["custom", "fallback"]);
}

#[test]
fn s14_37_parameters_in_args_and_unknown_names_kept() {
    let fixture = echo_runtime(
        r#"["parameter is {value}", "{missing_param}"]"#,
        "rye/core/primitives/subprocess",
    );
    let req = request("t/tool", json!({"value": "injected"}));
    let plan = plan_of(&fixture, &req, &[]).expect("plans");
    assert_eq!(plan.args, ["parameter is injected", "{missing_param}"]);
}

#[test]
fn s14_38_env_and_parameter_in_one_arg() {
    let fixture = echo_runtime(
        r#"["${VAR1:-default1} {param1}"]"#,
        "rye/core/primitives/subprocess",
    );
    let req = request("t/tool", json!({"param1": "p"}));
    let plan = plan_of(&fixture, &req, &[]).expect("plans");
    assert_eq!(plan.args, ["default1 p"]);
    assert_eq!(plan.env.get("VAR1").map(String::as_str), Some("default1"));
}

#[test]
fn s9_execute_is_an_alias_of_the_subprocess_primitive() {
    let fixture = echo_runtime(r#"["hi"]"#, "rye/core/primitives/execute");
    let req = request("t/tool", json!({}));
    let plan = plan_of(&fixture, &req, &[]).expect("the seed-001 primitive id runs");
    assert_eq!(plan.program, "echo");
    assert_eq!(plan.args, ["hi"]);
}

#[test]
fn s5_4_missing_interpreter_names_the_element_and_the_variable() {
    let fixture = "//- /project/.ai/tools/t/rt.yaml
version: \"1.0.0\"
tool_type: runtime
executor_id: rye/core/primitives/subprocess
env_config:
  interpreter:
    type: local_binary
    binary: ruby
    search_paths: [bin]
    var: RYE_RUBY
config:
  command: \"${RYE_RUBY}\"
//- /project/.ai/tools/t/tool.py
__version__ = \"1.0.0\"
__executor_id__ = \"t/rt\"
";
    let req = request("t/tool", json!({}));
    let err = plan_of(fixture, &req, &[]).expect_err("no ruby, no fallback");
    let text = err["error"].as_str().unwrap();
    assert!(text.contains("RYE_RUBY") && text.contains("t/rt"), "{text}");
}

#[test]
fn s11_2_refusals_carry_the_trace_with_the_failed_verification() {
    let mut req = request("t/echo", json!({}));
    req.trace = true;
    req.policy = Policy {
        allow_unsigned: false,
    };
    let err = plan_of(SCRIPT_TOOL, &req, &[]).expect_err("unsigned");
    let trace = err["trace"].as_array().expect("a refusal keeps the trace");
    let steps: Vec<&str> = trace.iter().filter_map(|e| e["step"].as_str()).collect();
    assert_eq!(
        steps,
        [
            "resolve",
            "resolve",
            "resolve",
            "verify_integrity",
            "verify_integrity",
            "verify_integrity"
        ]
    );
    assert_eq!(trace[3]["item_id"], "t/echo");
    assert_eq!(trace[3]["verified"], false);
    assert_eq!(trace[3]["key_fp"], Json::Null);
    assert_eq!(trace[4]["verified"], true);
}

#[test]
fn s11_2_other_extensions_in_the_same_space_are_not_shadowed() {
    let fixture = format!(
        "{SCRIPT_TOOL}//- /project/.ai/tools/t/echo.yaml\nversion: \"1.0.0\"\nexecutor_id: rye/core/runtimes/python/script\n//- /user/.ai/tools/t/echo.py\n__executor_id__ = None\n"
    );
    let mut req = request("t/echo", json!({}));
    req.trace = true;
    req.dry_run = false;
    let host = host(&fixture);
    let mut facts = Facts::complete(BTreeMap::new());
    let prepared = loop {
        match plan(host.analysis(), &req, &facts) {
            Step::Need(needs) => answer(&needs, &mut facts),
            Step::Run(p) => break p,
            Step::Refused(r) => panic!("{r:?}"),
            Step::DryRun(v) => panic!("{v:?}"),
            Step::Http(p) => panic!("{:?}", p.plan),
        }
    };
    let trace = prepared.trace.expect("trace asked for");
    let ryechain::exec::response::TraceEvent::Resolve { shadowed, .. } = &trace[0] else {
        panic!("the first event resolves the tool: {trace:?}")
    };
    assert_eq!(
        shadowed,
        &[(
            PathBuf::from("/fixture/user/.ai/tools/t/echo.py"),
            "user".to_owned()
        )],
        "the project's echo.yaml loses to echo.py by extension order, but is not 'shadowed'"
    );
}

/// A run that did not run the tool is never a success: the reference's `node_runtime.yaml` had
/// `args: []` (§15.40), so node read the parameters on stdin as its script and answered success
/// with no output. The planner refuses such a chain before anything is spawned.
#[test]
fn s15_40_a_chain_whose_command_line_never_names_the_tool_is_refused() {
    let fixture = "//- /project/.ai/tools/t/node_rt.yaml
version: \"1.0.0\"
tool_type: runtime
executor_id: rye/core/primitives/subprocess
config:
  command: node
  args: []
  input_data: \"{params_json}\"
//- /project/.ai/tools/t/hi.js
const __version__ = \"1.0.0\";
const __executor_id__ = \"t/node_rt\";
console.log(\"hi\");
";
    let req = request("t/hi", json!({}));
    let err = plan_of(fixture, &req, &[]).expect_err("refused");
    assert_eq!(
        err["error"],
        "The chain of t/hi never runs t/hi: its command line `node` does not name the tool file \
         /fixture/project/.ai/tools/t/hi.js, and the tool's own config supplies none of it; the \
         runtime `t/node_rt` must pass `{tool_path}` in its `args` or `input_data` (or the tool's \
         config set `command`)"
    );
    assert_eq!(
        err["chain"],
        json!(["t/hi", "t/node_rt", "rye/core/primitives/subprocess"])
    );
}

#[test]
fn a_runtime_called_directly_is_refused() {
    for id in [
        "rye/core/runtimes/bash_runtime",
        "rye/core/runtimes/bash/bash",
        "rye/core/runtimes/node/node",
        "rye/core/runtimes/python/function",
    ] {
        let req = request(id, json!({}));
        let err = plan_of(SCRIPT_TOOL, &req, &[]).expect_err("refused");
        assert_eq!(
            err["error"],
            format!(
                "`{id}` is a runtime: it runs the tools whose executor_id names it and has no tool \
                 of its own, so calling it directly would run nothing but its own YAML file; run \
                 one of its tools instead"
            )
        );
    }
}

/// Every bundled runtime's kind of tool still plans: the tool file is named as a path
/// (python/script, python/function, node, bash, state graph) or through the tool's own config
/// (an MCP tool's `server_config_path` and `tool_name`; a command tool's `command`).
#[test]
fn s13_every_bundled_runtime_names_its_tool() {
    let fixture = "//- /project/.ai/tools/t/script.py
__version__ = \"1.0.0\"
__executor_id__ = \"rye/core/runtimes/python/script\"
//- /project/.ai/tools/t/function.py
__version__ = \"1.0.0\"
__executor_id__ = \"rye/core/runtimes/python/function\"
def execute(params, project_path):
    return params
//- /project/.ai/tools/t/flat.py
__version__ = \"1.0.0\"
__executor_id__ = \"rye/core/runtimes/python_function_runtime\"
def execute(params, project_path):
    return params
//- /project/.ai/tools/t/node.js
const __version__ = \"1.0.0\";
const __executor_id__ = \"rye/core/runtimes/node/node\";
//- /project/.ai/tools/t/node_flat.js
const __version__ = \"1.0.0\";
const __executor_id__ = \"rye/core/runtimes/node_runtime\";
//- /project/.ai/tools/t/shell.sh
__version__=\"1.0.0\"
__executor_id__=\"rye/core/runtimes/bash/bash\"
//- /project/.ai/tools/t/graph.yaml
version: \"1.0.0\"
tool_type: graph
executor_id: rye/core/runtimes/state-graph/runtime
config:
  start: done
  nodes:
    done:
      type: return
//- /project/.ai/tools/t/mcp.yaml
version: \"1.0.0\"
tool_type: mcp
executor_id: rye/core/runtimes/mcp/stdio
config:
  server: mcp/servers/x
  server_config_path: \"{project_path}/.ai/tools/mcp/servers/x.yaml\"
  tool_name: list_issues
//- /project/.ai/tools/t/cmd_rt.yaml
version: \"1.0.0\"
tool_type: runtime
executor_id: rye/core/primitives/subprocess
config:
  args: [\"--version\"]
//- /project/.ai/tools/t/cmd.yaml
version: \"1.0.0\"
executor_id: t/cmd_rt
config:
  command: git
";
    for (id, named) in [
        ("t/script", "/fixture/project/.ai/tools/t/script.py"),
        ("t/function", "/fixture/project/.ai/tools/t/function.py"),
        ("t/flat", "/fixture/project/.ai/tools/t/flat.py"),
        ("t/node", "/fixture/project/.ai/tools/t/node.js"),
        ("t/node_flat", "/fixture/project/.ai/tools/t/node_flat.js"),
        ("t/shell", "/fixture/project/.ai/tools/t/shell.sh"),
        ("t/graph", "/fixture/project/.ai/tools/t/graph.yaml"),
        ("t/cmd", "git"),
    ] {
        let req = request(id, json!({}));
        let env = [
            ("RYE_KERNEL_PYTHON", "/usr/bin/python3"),
            ("RYECHAIN_EXE", "/usr/bin/ryechain"),
        ];
        let plan = plan_of(fixture, &req, &env).unwrap_or_else(|e| panic!("{id} plans: {e}"));
        let line: Vec<&String> = std::iter::once(&plan.program).chain(&plan.args).collect();
        assert!(line.iter().any(|a| *a == named), "{id}: {line:?}");
    }
}
