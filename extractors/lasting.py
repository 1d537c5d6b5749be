"""What becomes a memory: decisions, constraints and fixes that will still hold in a later session.

A user's statement counts when it is firm and their own: not a hedge, not a question, not
pasted material (blocks in `<tags>`, `>` quotes, code fences), not the session's own task
instructions (talk about "your response", "this task", code blocks), and not a template
the user side repeats word for word. An assistant's statement counts only when it is firm,
stands on its own (no opening "so", "then", "this"), is not narration of its next step
("I'll use `sed` to…") or a quote of instructions, and is
confirmed by what followed: a later successful call acts on what it names, or a failing
command it concluded about passes afterwards.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter

import msgspec

from deepmem.extractors.calls import Timeline, ToolCall
from deepmem.extractors.errors import find_errors
from deepmem.extractors.statements import sentences
from deepmem.phrasing import ASSISTANT_CONSTRAINT, DECISION, NUDGE_PATTERNS, USER_CONSTRAINT
from deepmem.toolcalls.touches import FILE_TOOLS, SHELL_TOOLS, call_touches

PASTED = re.compile(r"<([A-Za-z][\w-]*)(?:\s[^<>]*)?>.*?</\1>|^[ \t]*>.*$", re.S | re.M)
"""Tagged blocks (a pasted issue, task instructions) and `>` quote lines."""
LOG_LIKE = re.compile(
    r"\btraceback\b|\bfile \"|\bline \d+|^\w*(?:error|exception|warning):|\$ |^\s*at \w|\bexit (?:code|status)",
)
HEDGE = re.compile(
    r"\b(?:i think|i guess|i believe|i suspect|maybe|perhaps|probably|possibly|might|could|seems?|apparently|"
    r"not sure|let me|let's|wait|actually|hmm|i need to|i should|try|trying|attempt|if|whether|unless|"
    r"or just|or better|for now|suggests?|as suggested|confident|should be|usually|partially|partly|indeed)\b|\?|我觉得|也许|可能|大概|试试|看看"
)
TASK_TALK = re.compile(
    r"\b(?:your (?:response|answer|task|changes?|commands?|work|output|solution|reply|code)|this task|the task|"
    r"instructions?|pr description|issue description|bug report|submit(?:ting)?|code block|bash block|"
    r"thought section|responses?|action|assignment)\b|任务|回复|提交"
)
STEP_NARRATION = re.compile(
    r"\bto (?:insert|inject|replace|append|apply|overwrite|write|edit|create|make|run|check|see|debug|verify|"
    r"reproduce|test|print|inspect|construct|update|find|look|confirm|modify|fix|do|delete|remove|extract|read|"
    r"restore|revert|build|be safe)\b|\btemporar|\bscripts?\b|\breproduc|\bdebug|\bprint\b|\bcarefully\b|"
    r"\bthis (?:change|edit|time)\b|\b(?:is|was) (?:working|verified|applied|in|done|complete)\b|:$|\bagain\b|\bas well\b|\bapproach\b|\bline numbers?\b|\bsafer\b|"
    r"\b(?:use|using) `?(?:sed|awk|ed|cat|perl|python3?|echo|printf|heredoc|git checkout|[\w-]+\.py)\b"
)
"""An assistant's "I'll use X to…" describes how it does the next step, not a lasting choice."""
SESSION_STATE = re.compile(
    r"\b(?:we're|we are|i'm|i am|i shouldn't|i should not)\b|\b(?:cause|problem|issue|bug|fix) was\b"
    r"|\b(?:these|my|the|your) changes\b|\bthis branch\b|\bbased on\b|\bi can see\b|\bcurrently\b"
    r"|\b(?:was|were|has been|had been) never\b"
    r"|(?:^|\s)(?!i |we )\S+ will (?!not\b|never\b|always\b)"
)
"""What this session is doing or expects next ("we're deferring…", "the cause was…", "X will see…")."""
PROGRESS = re.compile(r"^(?:i (?:have |'ve )?)?fixed\b", re.I)
MEANS = re.compile(r"\bby [\w-]+ing\b|\b(?:because|since|so that|instead of|rather than)\b")
""""Fixed X" reports progress; it lasts only when it says how or why ("…by converting…")."""
CODE = re.compile(
    r"`[^`]*[A-Za-z_]{3}[^`]*`|\b[A-Za-z_]\w*(?:[._]\w+)+\b|\b[A-Za-z]*[a-z][A-Z]\w*\b|\b[A-Za-z]+\d+\w*\b|\w+\(\)"
)
"""A name from the code: an identifier in backticks, a dotted or snake_case name, camelCase, a name with digits."""
CHOSEN = re.compile(r"\b(?:decided|decision|chose|opted|settled on|going with)\b")
"""An explicit choice stands without naming code; any other assistant statement must name what it is about."""
OPENER = re.compile(
    r"(?:so|then|but|and|or|since|this|that|these|it|also|now|here|thus|therefore|hence|otherwise|because|"
    r"which|when|in|for|with|type|my|our|no|yes|ok|okay|used|called)\b|所以|然后|但是|因此",
    re.I,
)
"""An assistant's sentence opening with a connective or a pointer leans on the one before: it does not stand alone."""
QUOTED = re.compile(r"^[\"“']|\"[^\"]{8,}\"|“[^”]{8,}”")
PLAN = re.compile(r"\b(?:i'll|i will|we'll|we will|i am going to|i'm going to) use\b")
REASON = re.compile(r"\b(?:for|because|since|rather than|instead of|so that|as)\b")
"""An assistant's plan ("I'll use X") is a lasting choice only when it gives a reason."""
ALTERNATIVES = re.compile(r"\bor\b")
"""A decision that still names alternatives has not chosen."""
SUBJECT = re.compile(r"`([^`]{2,80})`|\b([A-Za-z_][\w.-]*[._-][\w.-]*[A-Za-z0-9]|[a-z]+[A-Z]\w*|[A-Za-z]{5,}\d*)\b")
GENERIC = frozenset(
    """about above after again before being below between change changes could current different during
    error errors every except files first function further other output should since still their there
    these thing things those through under until using value values where which while would always never
    instead rather because decided going stick switch""".split()
)
"""Words too common to say that a later call acted on a statement."""
NUDGE_TYPES = {"decision": "decision", "constraint": "constraint", "fix": "gotcha"}
"""What the memory nudge's detections become: the same sentences the model is reminded to store."""
ACTING_TOOLS = SHELL_TOOLS | FILE_TOOLS


class Candidate(msgspec.Struct, frozen=True):
    """A statement worth keeping as a memory: its type, text, who said it and when."""

    type: str
    text: str
    role: str
    step: int
    path: str = ""
    """The file the call that confirmed the statement changed ('' when none did)."""

    def memory_text(self) -> str:
        """The text as a memory: naming the file it concerns as `(in `path`)` unless it already does."""
        if not self.path or posixpath.basename(self.path).lower() in self.text.lower():
            return self.text
        return f"{self.text} (in `{self.path}`)"


STANDING_RULE = re.compile(
    r"^\W*(?:please |and |also |note:? )?(?:always|never(?! mind)|from now on|going forward)\b"
    r"|\bwe (?:should |must |want to )?(?:always|never)\b|总是|始终|永远|一律|以后都|必须|禁止|严禁|不得|务必"
)
"""A rule however it is asked for: it opens with "always…" or "never…", or says what "we always" or "we never" do."""
USER_RULE = re.compile(r"\bwe (?:use|only use|don't use|do not use|prefer)\b|\b(?<!you )(?:must|mustn't)\b|我们(?:用|使用|只用|不用)")
"""A rule unless it is asked as a request or a question: "we use…", or "must" said of the project, not to the agent."""
REQUEST = re.compile(r"\W*(?:ok(?:ay)?,?\s+|so,?\s+)?(?:can|could|would|will) (?:you|we)\b|\W*(?:let's|i'm|i am|"
                     r"looking at|what|how|why|where|is|are|does|do you)\b")
"""A request or a question, whatever rule words it holds."""
MARKUP = re.compile(r"\|.*\||^[+>#*|]|→|\*\*|^\W*$|^`[^`]*` [-–:] ")
"""A table row, a diff or quote line, a heading, an arrow or bold run, a `name` - definition item: material pasted
or drawn up, not said."""
MIN_WORDS = 4
CJK = re.compile(r"[\u3400-\u9fff]")
LABEL = re.compile(r"^[A-Z]{3,}:\s*")
"""A shouted label a harness asks for (`THOUGHT:`), not part of what is said."""


def _own_words(text: str) -> str:
    """The text without pasted blocks and quotes (code fences go in `sentences`)."""
    return PASTED.sub("\n", text)


def _kind(sentence: str, role: str) -> str | None:
    """decision, constraint, gotcha (a fix the memory nudge detects), or None; a person's words only as a rule."""
    lowered = sentence.lower()
    if role == "user":
        rule = STANDING_RULE.search(lowered) or USER_RULE.search(lowered) and not REQUEST.match(lowered)
        return "constraint" if rule else None
    if DECISION.search(lowered):
        return "decision"
    constraint = USER_CONSTRAINT if role == "user" else ASSISTANT_CONSTRAINT
    if constraint.search(lowered):
        return "constraint"
    return next((NUDGE_TYPES[kind] for kind, pattern, _ in NUDGE_PATTERNS if pattern.search(sentence)), None)


def _firm(sentence: str, role: str, kind: str) -> bool:
    """Not a hedge, not about the task's own instructions, not log text, not a quote or narration."""
    lowered = sentence.lower()
    if HEDGE.search(lowered) or TASK_TALK.search(lowered) or LOG_LIKE.search(lowered) or MARKUP.search(sentence):
        return False
    if len(sentence.split()) < MIN_WORDS and not CJK.search(sentence) or QUOTED.search(sentence):
        return False
    if kind == "decision" and ALTERNATIVES.search(lowered):
        return False
    if role == "user":
        return True
    if OPENER.match(sentence) or PLAN.search(lowered) and not REASON.search(lowered):
        return False
    if STEP_NARRATION.search(lowered) or SESSION_STATE.search(lowered):
        return False
    if PROGRESS.match(sentence) and not MEANS.search(lowered):
        return False
    return bool(CHOSEN.search(lowered) or PLAN.search(lowered) or CODE.search(sentence))


def subjects(sentence: str) -> set[str]:
    """What a statement is about: code spans, identifiers and longer words, lowercased."""
    found = set()
    for match in SUBJECT.finditer(sentence):
        word = (match.group(1) or match.group(2)).lower()
        if word not in GENERIC:
            found.add(word)
    return found


def _acted_upon(sentence: str, calls: tuple[ToolCall, ...]) -> ToolCall | None:
    """The first successful edit, write or command of the session that mentions what the sentence is about."""
    names = subjects(sentence)
    if not names:
        return None
    for call in calls:
        if call.tool in ACTING_TOOLS and not call.failed:
            words = str(call.input).lower()
            if any(name in words for name in names):
                return call
    return None


def changed_file(call: ToolCall | None) -> str:
    """The first file a call changed, relative to its working folder when inside it ('' when none)."""
    if call is None:
        return ""
    changed = call_touches(call.tool, call.input).changed
    if not changed:
        return ""
    path = changed[0]
    folder = call.cwd.rstrip("/") + "/" if call.cwd else ""
    return path[len(folder):] if folder and path.startswith(folder) else path


def find_candidates(timeline: Timeline) -> list[Candidate]:
    """Memory candidates of one session, oldest first, each text once (its newest position)."""
    user_said = Counter(sentence for prose in timeline.prose if prose.role == "user"
                        for sentence in set(sentences(_own_words(prose.text))))
    fixed = [(error.first_step, error.fixed_step) for error in find_errors(timeline)
             if error.fixed_step]
    found: dict[str, Candidate] = {}
    for prose in timeline.prose:
        for said_text in sentences(_own_words(prose.text)):
            sentence = LABEL.sub("", said_text)
            kind = _kind(sentence, prose.role)
            if kind is None or not _firm(sentence, prose.role, kind):
                continue
            if prose.role == "user" and user_said[sentence] > 1:
                continue
            call = _acted_upon(sentence, timeline.calls)
            confirmed = call is not None or any(first <= prose.step <= done for first, done in fixed)
            if prose.role != "user" and not confirmed:
                continue
            key = sentence.casefold().rstrip(".!。")
            found.pop(key, None)
            found[key] = Candidate(kind, sentence, prose.role, prose.step, changed_file(call))
    return list(found.values())
