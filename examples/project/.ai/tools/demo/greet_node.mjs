// rye:signed:2026-11-23T12:23:12Z:a729234a6fb779cf8081b361d15746ea89e5bfe948cccd3e1c7e31b10aea14b7:d6FOtkCxmHLBrAiZCLUPVAJr0zhCl6uc342CzBjmE6k47xVsKL6vd5EO0i-TXN86DNMhJEZswqqLHkrOWlsjDA==:64205436039b7683
// Greets someone: a JavaScript tool run by the node/node runtime.
// The runtime starts `node greet_node.mjs --project-path <dir>` with the parameters as JSON on
// stdin; the JSON printed on stdout comes back as the result's `data`.
export const __version__ = "1.0.0";
export const __tool_type__ = "javascript";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "demo";
export const __tool_description__ = "Greet someone (Node runtime)";

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const params = input ? JSON.parse(input) : {};
  const name = params.name ?? "world";
  console.log(JSON.stringify({ greeting: `Hello, ${name}!`, runtime: "node/node", params }));
});
