"""A scripted model that works through numbered tasks, for long sessions in tests and benchmarks.

Give it to `ScriptedModelServer(respond=WorkerModel(...))`. For a prompt `TASK <n>: ...` it calls a tool
(`read_file` of `path`), and once the tool's answer is in, it says `Done with task <n>.`. Asked for a summary
(a compaction: the system prompt of `prompts/compact.md`), it lists the tasks it finds in what it is given.
It checks every request as a provider would and as the task demands, and records what is wrong instead of
failing: a tool call without its answer, an answer without its call, a task it cannot find (`problems`).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from .records import RecordedRequest
from .script import FinishStep, Reply, TextStep, ToolCallStep, UsageStep

SUMMARY_MARK = "You summarise a coding session"
_TASK = re.compile(r"TASK (\d+):")
_SUMMARY_TASKS = re.compile(r"Tasks handled so far: ([\d, ]+)")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


@dataclass
class WorkerModel:
    path: str  # the file each task reads
    lock: threading.Lock = field(default_factory=threading.Lock)
    answered: list[int] = field(default_factory=list)
    summaries: int = 0
    problems: list[str] = field(default_factory=list)

    def __call__(self, request: RecordedRequest) -> Reply:
        messages = request.body.get("messages") or []
        with self.lock:
            if messages and SUMMARY_MARK in _text(messages[0].get("content")):
                self.summaries += 1
                return self._summary(messages)
            return self._work(messages)

    def _summary(self, messages: list[dict[str, Any]]) -> Reply:
        text = "\n".join(_text(message.get("content")) for message in messages[1:])
        tasks = {int(n) for n in _TASK.findall(text)}
        for listed in _SUMMARY_TASKS.findall(text):  # an earlier summary, summarised again
            tasks |= {int(n) for n in listed.replace(",", " ").split()}
        listed = ", ".join(str(n) for n in sorted(tasks))
        return Reply(steps=[TextStep(pieces=[f"Tasks handled so far: {listed}"]), FinishStep(), UsageStep()])

    def _work(self, messages: list[dict[str, Any]]) -> Reply:
        self._check_pairs(messages)
        tasks = [int(n) for m in messages if m.get("role") == "user" for n in _TASK.findall(_text(m.get("content")))]
        last = messages[-1] if messages else {}
        if not tasks:
            self.problems.append(f"no task in a request of {len(messages)} messages")
            return Reply.text("I have lost track of the task.")
        task = tasks[-1]
        if last.get("role") == "user":
            call = ToolCallStep(name="read_file", arguments=json.dumps({"path": self.path}), id=f"call_task{task}")
            return Reply(steps=[call, FinishStep(finish_reason="tool_calls"), UsageStep(completion_tokens=20)])
        if last.get("role") == "tool":
            if f"call_task{task}" != last.get("tool_call_id"):
                self.problems.append(f"task {task}: the last tool answer is not the task's own call")
            self.answered.append(task)
            return Reply(steps=[TextStep(pieces=[f"Done with task {task}."]), FinishStep(), UsageStep()])
        self.problems.append(f"task {task}: a request that ends with a {last.get('role')} message")
        return Reply.text("Nothing to do.")

    def _check_pairs(self, messages: list[dict[str, Any]]) -> None:
        calls: list[str] = []
        answers: set[str] = set()
        for message in messages:
            if message.get("role") == "assistant":
                calls += [call["id"] for call in message.get("tool_calls") or []]
            elif message.get("role") == "tool":
                if message.get("tool_call_id") not in calls:
                    self.problems.append(f"an answer to {message.get('tool_call_id')} without its call")
                answers.add(str(message.get("tool_call_id")))
        self.problems += [f"a call without its answer: {call}" for call in calls if call not in answers]
