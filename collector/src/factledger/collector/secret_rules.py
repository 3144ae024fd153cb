"""The rule data of redaction: which texts are secrets, as regular expressions with the
literal or words each needs (`Redactor` in redaction.py applies them).

Families, after the well-known rule sets (gitleaks, trufflehog): cloud keys (AWS, GCP,
Azure, DigitalOcean), forges and registries (GitHub, GitLab, npm, PyPI, Docker Hub),
messaging and SaaS (Slack, Discord, Telegram, Stripe, Twilio, SendGrid, Mailgun, Heroku,
Shopify, Vault, Hugging Face, OpenAI, Anthropic), tokens (JWT, JWE, bearer), private key
blocks (PEM, OpenSSH, PGP, and base64-wrapped), credentials in URLs, headers, command
lines and files (`.netrc`, `.pgpass`, Kubernetes Secrets, Docker configs), and assigned
values (`password=`, `secret:`, `"api_key": "..."`) in env, YAML, JSON, INI, TOML and
command-line forms.

Every rule finds its secret however many times the text around it was JSON-encoded: a
tool's JSON result inside a GenAI message inside a span attribute puts 1, 3, 7, ...
backslashes before each quote, so wherever a pattern steps over a quote it allows any
run of backslashes (`_ESC`), and a value ends at the first backslash or quote. A line
break is `\\n` at any depth (its last backslash and the letter). Every pattern is
linear: bounded repetitions, and a repeated group only where its first character tells
it apart from what precedes it.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One kind of secret. `anchors` are lower-case substrings one of which the text must
    contain for the pattern to run (empty: always run); `group` is the part replaced (0:
    the whole match, -1: whichever group of alternatives matched)."""

    name: str
    pattern: re.Pattern[str]
    anchors: tuple[str, ...] = ()
    group: int = 0
    joinable: bool = True
    """The pattern finds in several strings joined by NUL what it finds in each: no `^`,
    `$` or lookaround that a NUL would change. Custom patterns are not assumed to be."""
    literals: tuple[str, ...] = ()
    """Case-sensitive substrings one of which every match contains (the literal the pattern
    starts with). Unlike anchors they change nothing the rule finds: text without any of
    them cannot match, so the pattern is not run on it. Only read when `anchors` is empty."""
    lead: int | None = None
    """When set, every match starts at most `lead` characters before an anchor it contains
    (the word the pattern names holds one: `client_secret` its `secret` 7 characters in).
    The pattern is then tried only at those starts (`Redactor.edits`): one that opens
    with a case-insensitive choice of words is otherwise tried at every character of the
    text, which costs the regex engine a hundred times a substring search."""


def _rule(
    name: str,
    pattern: str,
    anchors: Iterable[str] = (),
    group: int = 0,
    literals: Iterable[str] = (),
    lead: int | None = None,
) -> Rule:
    return Rule(
        name, re.compile(pattern), tuple(anchors), group, literals=tuple(literals), lead=lead
    )


# Patterns of fixed-format secrets start with a literal (the word boundary is checked by a
# lookbehind after it): the regex engine then skips through text as fast as a substring
# search, where a leading `\b` or character class costs twenty times more per character.
# Inside JSON-encoded strings (GenAI messages, tool arguments and results) a line break or
# tab is the two characters `\n`, `\t`: a letter after a backslash also starts a word. An
# underscore does too: a key glued to a variable's name (`OPENAI_KEY_sk-...`) is a key.
_NOT_AFTER_WORD = r"(?:(?<![A-Za-z0-9-]{prefix})|(?<=\\[nrtbf]{prefix}))"
_WORD_START = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrtbf]))"
"""A word begins here: not after a letter, digit or underscore, or right after an escape."""

_ESC = r"\\{0,1023}"
"""The backslashes JSON encoding puts before a quote, to ten levels deep (2**10 - 1)."""
_NEWLINE = r"(?:\r?\n|(?:\\{1,1023}r)?\\{1,1023}n)"
"""A line break, raw or JSON-escaped at any depth."""
_GAP = r"(?:[ \t]|\r?\n|\\{1,1023}[nrt]){1,16}"
"""Blanks between the words of a `.netrc` entry, line breaks raw or escaped."""

# Context rules name their word without a left boundary: the word may follow a JSON escape
# (`\npassword=`) or an environment variable's prefix (`DB_PASSWORD=`, `PGPASSWORD=`).
# What follows the word (a separator, then the value) keeps them from matching prose.
_ASSIGNED = _ESC + r"[\"']?\s{0,5}[:=]\s{0,5}"
"""The separator after a key: `=`, `: `, `": "` or, escaped inside JSON, `\": \"`."""
_HEADER = _ASSIGNED + _ESC + r"[\"']?"
"""A header's `: ` up to its value, as written in a request dump, a JSON map or escaped
inside JSON."""
_VALUE = _ESC + r"\"([^\"\\]{1,4096})|" + _ESC + r"'([^'\\]{1,4096})|([^\s\"',;{}<>\\]{6,4096})"
"""An assigned value: quoted (whole, to its closing quote at any depth), or bare (six
characters at least, to a blank or a delimiter)."""
_JSON_KEY_END = _ESC + r"\"\s{0,5}:\s{0,5}" + _ESC + r"\""
"""From the end of a JSON key to the opening quote of its string value, at any depth."""


def _prefixed(name: str, prefix: str, rest: str) -> Rule:
    boundary = _NOT_AFTER_WORD.format(prefix=re.escape(prefix))
    return _rule(name, re.escape(prefix) + boundary + rest, literals=[prefix])


def _base64_fragments(word: str) -> tuple[str, ...]:
    """The base64 characters `word` always encodes to, at each of its three alignments:
    base64 text holding `word` holds one of them, whatever surrounds it."""
    raw = word.encode()
    fragments = []
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw + b"\0\0\0").decode()
        first = -(-8 * shift // 6)  # the first character made of the word's bits alone
        fragments.append(encoded[first : 8 * (shift + len(raw)) // 6])
    return tuple(fragments)


_ENCODED_WORDS = (" PRIVATE KEY-----", "PASSWORD=", "_SECRET=", "_TOKEN=", "_API_KEY=")
"""Secrets' words a base64 blob (a `.env`, a kubeconfig's `client-key-data`) gives away."""
_ENCODED = tuple(f for word in _ENCODED_WORDS for f in _base64_fragments(word))

_SCHEMES = r"(?:bearer|basic|token|api-?key|key|sso-key|ssws|digest|aws4-hmac-sha256)"


SECRET_RULES: tuple[Rule, ...] = (
    _rule(
        "private_key",
        r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[^-]|-(?!----END)){0,20000}"
        r"(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)?",
        literals=["-----BEGIN "],
    ),
    _rule(
        "url_password",
        # The password runs to the last `@` before the host (it may hold `@` and `/`, not
        # `:`, which keeps a run of `://` from being walked twice); a port is no password.
        r"://[^\s:/@\"'<>\\]{0,256}:(?!\d{1,5}(?:[/?#]|$))([^\s:\"'<>\\]{1,256})@",
        group=1,
        literals=["://"],
    ),
    _rule(
        "bearer_token",
        r"(?i)(?:(?<![A-Za-z0-9_])|(?<=\\[nrtbf]))bearer\s+([A-Za-z0-9._~+/=_-]{16,4096})",
        ["bearer"],
        group=1,
        lead=0,
    ),
    _rule(
        "basic_auth",
        r"(?i)authorization" + _HEADER + r"basic\s+([A-Za-z0-9+/]{8,4096}={0,2})",
        ["basic"],
        group=1,
    ),
    _rule(
        "authorization",
        r"(?i)authorization" + _HEADER + r"(?:token|api-?key|key|sso-key|ssws|digest)\s+"
        r"([A-Za-z0-9._~+/=:,\"-]{8,4096})",
        ["authorization"],
        group=1,
        lead=0,
    ),
    _rule(
        "authorization",
        # A JSON header map's value without a scheme (`{"Authorization": "3f9c..."}`).
        r"(?i)authorization" + _JSON_KEY_END + r"(?!" + _SCHEMES + r"\s)([^\"\\]{8,4096})",
        ["authorization"],
        group=1,
        lead=0,
    ),
    _rule(
        "aws_signature",
        r"(?i)signature=([a-f0-9]{64})(?![a-f0-9])",
        ["signature="],
        group=1,
        lead=0,
    ),
    _rule(
        "aws_session_token",
        r"(?i)(?:security|session)[_-]?token"
        + _ASSIGNED
        + _ESC
        + r"[\"']?([A-Za-z0-9%/+=]{16,8192})",
        ["security", "session"],
        group=1,
        lead=0,
    ),
    _rule(
        "azure_sas_signature",
        r"(?i)[?&;]sig=([A-Za-z0-9%+/=]{16,512})",
        ["sig="],
        group=1,
        lead=1,
    ),
    _rule(
        "cookie",
        r"(?i)cookie" + _HEADER + r"([^\s=;\"'\\]{1,256}=[^\r\n\"'\\]{1,4096})",
        ["cookie"],
        group=1,
        lead=0,
    ),
    _rule(
        "private_token",
        r"(?i)private-token" + _HEADER + r"([A-Za-z0-9._-]{8,512})",
        ["private-token"],
        group=1,
        lead=0,
    ),
    _rule(
        "aws_secret_key",
        r"(?i)secret_?access_?key"
        + _ASSIGNED
        + _ESC
        + r"[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        ["access"],
        group=1,
        lead=7,
    ),
    # A bare secret beside its key id (`AKIA... and wJalr...`): 40 characters mixing upper
    # and lower case (a SHA-1 is lower-case hex) within a line of the id.
    *(
        _rule(
            "aws_secret_key",
            prefix + r"[A-Z0-9]{16}(?![A-Za-z0-9])[^\n]{0,160}?(?<![A-Za-z0-9/+])"
            r"((?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])[A-Za-z0-9/+]{40})"
            r"(?![A-Za-z0-9/+])",
            group=1,
            literals=[prefix],
        )
        for prefix in ("AKIA", "ASIA")
    ),
    _rule(
        "azure_storage_key",
        r"(?i)(?:account|sharedaccess)key\s{0,3}=\s{0,3}([A-Za-z0-9+/]{20,256}={0,2})",
        ["accountkey", "sharedaccesskey"],
        group=1,
        lead=0,
    ),
    _rule(
        "azure_client_secret",
        r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
        ["q~"],
        lead=4,
    ),
    _prefixed("anthropic_key", "sk-ant-", r"[A-Za-z0-9_-]{20,512}"),
    _prefixed(
        "openai_key",
        "sk-",
        # A key a terminal or a log wrapped goes on after the line break when the next
        # line is one more run of key characters with a digit in it.
        r"(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,512}"
        r"(?:" + _NEWLINE + r"(?=[A-Za-z_-]{0,40}[0-9])[A-Za-z0-9_-]{12,512}(?![A-Za-z0-9_-]))?",
    ),
    _prefixed("aws_access_key", "AKIA", r"[A-Z0-9]{16}(?![A-Za-z0-9])"),
    _prefixed("aws_access_key", "ASIA", r"[A-Z0-9]{16}(?![A-Za-z0-9])"),
    _prefixed("aws_session_token", "FwoGZXIvYXdz", r"[A-Za-z0-9+/=%]{40,8192}"),
    _prefixed("aws_session_token", "IQoJb3JpZ2lu", r"[A-Za-z0-9+/=%]{40,8192}"),
    _prefixed("github_token", "gh", r"[pousr]_[A-Za-z0-9]{36,255}"),
    _prefixed("github_token", "github_pat_", r"[A-Za-z0-9_]{22,255}"),
    _prefixed(
        "gitlab_token", "gl", r"(?:pat|dt|rt|ptt|oas|ft|imt|agent|cbt)-[A-Za-z0-9_-]{20,255}"
    ),
    _prefixed("slack_token", "xox", r"[abposre]-[A-Za-z0-9-]{10,255}"),
    _prefixed("slack_token", "xoxe.xox", r"[bp]-[A-Za-z0-9-]{10,255}"),
    _prefixed("slack_token", "xapp-", r"[0-9]-[A-Za-z0-9-]{10,255}"),
    _rule(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{8,255}",
        literals=["https://hooks.slack.com/"],
    ),
    _rule(
        "discord_webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{8,20}/"
        r"[A-Za-z0-9_-]{20,128}",
        literals=["https://"],
    ),
    _rule(
        "telegram_bot_token",
        r"(?<![0-9])[0-9]{6,12}:AA[A-Za-z0-9_-]{32,40}(?![A-Za-z0-9_-])",
        [":aa"],
        lead=12,
    ),
    _prefixed("google_api_key", "AIza", r"[0-9A-Za-z_-]{35}"),
    _prefixed("google_oauth_token", "ya29.", r"[0-9A-Za-z_-]{20,4096}"),
    _prefixed("stripe_key", "sk_", r"(?:live|test)_[A-Za-z0-9]{16,255}"),
    _prefixed("stripe_key", "rk_", r"(?:live|test)_[A-Za-z0-9]{16,255}"),
    _prefixed("stripe_key", "whsec_", r"[A-Za-z0-9]{24,255}"),
    _prefixed("sendgrid_key", "SG.", r"[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"),
    _prefixed("twilio_key", "SK", r"[0-9a-f]{32}(?![A-Za-z0-9])"),
    _prefixed("mailgun_key", "key-", r"[0-9a-f]{32}(?![A-Za-z0-9])"),
    _prefixed("heroku_key", "HRKU-", r"[A-Za-z0-9_-]{20,255}"),
    _prefixed("shopify_token", "shp", r"(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])"),
    _prefixed("vault_token", "hv", r"[sbr]\.[A-Za-z0-9_-]{24,512}"),
    _prefixed("digitalocean_token", "do", r"[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9])"),
    _prefixed("docker_hub_token", "dckr_pat_", r"[A-Za-z0-9_-]{20,255}"),
    _prefixed("pypi_token", "pypi-", r"AgE[A-Za-z0-9_-]{50,4096}"),
    _prefixed("huggingface_token", "hf_", r"[A-Za-z0-9]{30,255}"),
    _prefixed("npm_token", "npm_", r"[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    _prefixed(
        "jwt", "eyJ", r"[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{8,4096}"
    ),
    _prefixed(
        "jwe",
        "eyJ",
        # Header, encrypted key (empty for direct encryption), IV, ciphertext, tag.
        r"[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{0,4096}\.[A-Za-z0-9_-]{8,4096}"
        r"\.[A-Za-z0-9_-]{8,65536}\.[A-Za-z0-9_-]{8,4096}",
    ),
    _prefixed("docker_config", "eyJhdXRocyI6", r"[A-Za-z0-9+/]{8,65536}={0,2}"),
    _rule(
        "docker_auth",
        r"(?i)\"auth" + _JSON_KEY_END + r"([A-Za-z0-9+/]{8,4096}={0,2})",
        ["auth"],
        group=1,
        lead=1,
    ),
    _rule(
        "base64_secret",
        # Base64 holding a secret's word (a wrapped `.env`, a key's PEM): the whole blob.
        r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{0,8192}?(?:"
        + "|".join(_ENCODED)
        + r")[A-Za-z0-9+/]{0,65536}={0,2}",
        [fragment.lower() for fragment in _ENCODED],
    ),
    _rule(
        "kubernetes_secret",
        # A `data:` map of base64 values, in the YAML `kubectl get secret` prints.
        _WORD_START + r"data:[ \t]{0,4}((?:" + _NEWLINE + r"[ \t]{1,16}[A-Za-z0-9._-]{1,253}:"
        r"[ \t]{1,4}[A-Za-z0-9+/]{4,65536}={0,2}(?=[ \t]{0,8}(?:[\r\n\\]|$))){1,256})",
        ["secret"],
        group=1,
    ),
    _rule(
        "kubernetes_secret",
        # The same map in JSON (`kubectl get secret -o json`).
        r"\"data"
        + _ESC
        + r"\"\s{0,5}:\s{0,5}\{((?:\s{0,8}"
        + _ESC
        + r"\"[A-Za-z0-9._-]{1,253}"
        + _JSON_KEY_END
        + r"[A-Za-z0-9+/]{1,65536}={0,2}"
        + _ESC
        + r"\",?){1,256})",
        ["secret"],
        group=1,
    ),
    _rule(
        "netrc_password",
        r"(?i)login"
        + _GAP
        + r"[^\s\\]{1,256}"
        + _GAP
        + r"password"
        + _GAP
        + r"([^\s\\\"']{1,512})",
        ["login"],
        group=1,
        lead=0,
    ),
    _rule(
        "pgpass_password",
        # host:port:database:user:password, a line of `~/.pgpass`.
        r"(?<![A-Za-z0-9.*_-])[A-Za-z0-9.*_-]{1,253}:(?:5432|6432|\*):[^:\s\\]{1,63}"
        r":[^:\s\\]{1,63}:([^\s\\\"']{1,512})",
        [":5432:", ":6432:", ":*:"],
        group=1,
        lead=253,
    ),
    _rule(
        "cli_password",
        # `curl -u user:password`, `--user user:password`.
        _WORD_START + r"(?:-u|--user)[ \t=]{1,5}[^\s:\\\"']{1,256}:([^\s\\\"']{1,512})",
        ["-u"],
        group=1,
        lead=1,
    ),
    _rule(
        "cli_password",
        # `mysql -ppassword` (the password glued to the flag).
        r"(?i)mysql(?:dump|admin|sh)?(?![A-Za-z0-9_])[^\n\\|;&]{0,200}?\s-p([^\s\\\"'-][^\s\\\"']{0,511})",
        ["mysql"],
        group=1,
        lead=0,
    ),
    _rule(
        "cli_password",
        # `--password value`, `--token=value`, `--client-secret 'value'`.
        r"(?i)--(?:password|passwd|pass|token|api-?key|secret|client-secret|access-token"
        r"|auth-token|private-key)(?:=|[ \t]{1,5})(?:"
        + _ESC
        + r"\"([^\"\\]{1,4096})|"
        + _ESC
        + r"'([^'\\]{1,4096})|([^\s\"'\\-][^\s\"'\\]{0,4095}))",
        [
            "--pass",
            "--token",
            "--api",
            "--secret",
            "--client-secret",
            "--access-token",
            "--auth-token",
            "--private-key",
        ],
        group=-1,
        lead=0,
    ),
    _rule(
        "assigned_secret",
        r"(?i)(?:api[_-]?key|apikey|secret[_-]?key[_-]?base|secret[_-]?(?:access[_-]?)?key"
        r"|client[_-]?secret|secret|password|passwd|passphrase|pwd|token|private[_-]?key"
        r"|(?:encryption|signing|master)[_-]?key)" + _ASSIGNED + r"(?:" + _VALUE + r")",
        ["key", "secret", "pass", "pwd", "token"],
        group=-1,
        lead=11,
    ),
    _rule(
        "env_secret",
        r"(?<=[A-Z0-9])_(?:TOKEN|SECRET|KEY_BASE|KEY|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?)"
        r"\s{0,3}[:=]\s{0,3}(?:" + _VALUE + r")",
        ["_token", "_secret", "_key", "_pass", "_pwd", "_credential"],
        group=-1,
        lead=0,
    ),
)
"""Secrets redacted by default."""

OPTIONAL_RULES: Mapping[str, Rule] = {
    "emails": _rule(
        "email", r"\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}", ["@"]
    ),
    "phones": _rule(
        "phone",
        r"(?<![\w+])(?:\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,4}"
        r"|\(\d{3}\) ?\d{3}[-.]\d{4}|\d{3}[-.]\d{3}[-.]\d{4})(?![\w])",
    ),
}
"""Personal data, redacted when switched on (`emails = true`, `phones = true`)."""

SECRET_KEY_ENDINGS: tuple[str, ...] = (
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "api_key",
    "api-key",
    "apikey",
    "x-api-key",
    "password",
    "passwd",
    "passphrase",
    "secret",
    "client_secret",
    "access_token",
    "refresh_token",
    "private_key",
    "encryption_key",
    "private-token",
    "x-auth-token",
    "x-access-token",
    "auth-token",
    "api-token",
    "x-api-token",
    "x-goog-api-key",
    "x-amz-security-token",
    "session-token",
)
"""Attribute key endings (after the last `.`) whose whole value is a secret."""
