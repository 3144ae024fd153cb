# ruff: noqa: E501  (data: real-world lines are kept whole, one shape to a line)
"""Real-world secret shapes, each with the parts that must never be stored and, beside
it, ordinary text of the same look that must come through unchanged."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass


@dataclass(frozen=True)
class SecretShape:
    """`text` as a tool or a log puts it; `secret` its parts that must not survive;
    `negative` a near miss that must survive as it is."""

    family: str
    name: str
    text: str
    secret: tuple[str, ...]
    negative: str


def _shape(
    family: str, name: str, text: str, secret: str | tuple[str, ...], negative: str
) -> SecretShape:
    return SecretShape(
        family, name, text, (secret,) if isinstance(secret, str) else secret, negative
    )


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


_AWS_ID = "AKIAQ7CORPUSEXAMPL3Z"
_AWS_SECRET = "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"
_STS = "FwoGZXIvYXdzEJr" + "CorpusStsSessionTok3n" * 30
_JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjb3JwdXMifQ.C0rpusJwtSignatureValue01"
_JWE = "eyJhbGciOiJSU0EtT0FFUCJ9.OKOawDo13gRp2ojaHV7LFpZcgV7T6DVZ.48V1_ALb6US04U3b.5eym8TW_c8SuK0ltJ3rpYIzOeDQz7TALvtu6UG9oMo4vpzs9tX_EFShS8iB7j6ji.XFBoMYUZodetZdvTiFvSkQ"
_RSA = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAc0rpusRsaKeyBody\n-----END RSA PRIVATE KEY-----\n"
_PGP = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGC0rpusPgpKeyBody\n=c0rP\n-----END PGP PRIVATE KEY BLOCK-----\n"
_ENV = "DB_HOST=db\nDB_PASSWORD=C0rpusWrappedEnvPw\nAPP_ENV=prod\n"

SHAPES: tuple[SecretShape, ...] = (
    # AWS
    _shape("aws", "access key id", f"key id {_AWS_ID}", _AWS_ID, "AKIA is how AWS ids begin"),
    _shape(
        "aws",
        "secret in env",
        f"AWS_SECRET_ACCESS_KEY={_AWS_SECRET}",
        "CorpusKey1",
        "AWS_REGION=eu-west-1",
    ),
    _shape(
        "aws",
        "secret in json",
        json.dumps({"SecretAccessKey": _AWS_SECRET}),
        "CorpusKey1",
        json.dumps({"SecretAccessKeyRotated": False}),
    ),
    _shape(
        "aws",
        "secret beside its id in prose",
        f"use {_AWS_ID} with {_AWS_SECRET} for the bucket",
        ("CorpusKey1", _AWS_ID),
        f"use {_AWS_ID[:4]} ids with commit 3f786850e387550fdab836ed7e6dc881de23001b",
    ),
    _shape(
        "aws",
        "credentials file",
        f"[default]\naws_access_key_id = {_AWS_ID}\naws_secret_access_key = {_AWS_SECRET}\n",
        ("CorpusKey1", _AWS_ID),
        "[default]\nregion = us-east-1\noutput = json\n",
    ),
    _shape(
        "aws",
        "long sts session token",
        f"aws_session_token = {_STS}",
        _STS[20:60],
        "session_timeout = 3600",
    ),
    _shape(
        "aws",
        "sts token in json",
        json.dumps({"SessionToken": _STS}),
        _STS[-40:],
        json.dumps({"SessionDuration": 3600}),
    ),
    _shape(
        "aws",
        "sigv4 authorization header",
        "Authorization: AWS4-HMAC-SHA256 Credential=AKIAQ7CORPUSEXAMPL3Z/20240101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
        ("5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7", "CORPUSEXAMPL3Z"),
        "SignedHeaders=host;x-amz-date",
    ),
    _shape(
        "aws",
        "presigned url",
        "https://b.s3.amazonaws.com/k?X-Amz-Credential=x&X-Amz-Signature=aa672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7&X-Amz-Security-Token=IQoJb3JpZ2luX2VjEC0rpusPresignedSecurityTok3nAbcdefghijkl",
        (
            "aa672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
            "C0rpusPresignedSecurityTok3n",
        ),
        "https://b.s3.amazonaws.com/k?X-Amz-Expires=3600",
    ),
    # GCP
    _shape(
        "gcp",
        "api key",
        "AIzaSyC0rpusG00gleApiKey0123456789abcde",
        "C0rpusG00gleApiKey0123456789",
        "AIza is a prefix",
    ),
    _shape(
        "gcp",
        "oauth access token",
        "ya29.a0AfH6SMC0rpusGcpAccessTok3nValue0123",
        "C0rpusGcpAccessTok3nValue0123",
        "ya29 is a bus line",
    ),
    _shape(
        "gcp",
        "service account private key",
        json.dumps(
            {
                "type": "service_account",
                "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQC0rpusGcpSaKey\n-----END PRIVATE KEY-----\n",
            }
        ),
        "MIIEvQC0rpusGcpSaKey",
        json.dumps({"type": "service_account", "private_key_id_rotation": 90}),
    ),
    # Azure
    _shape(
        "azure",
        "storage connection string",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=C0rpusAzureStorageKey0123456789abcdef==;EndpointSuffix=core.windows.net",
        "C0rpusAzureStorageKey0123456789",
        "DefaultEndpointsProtocol=https;AccountName=acme",
    ),
    _shape(
        "azure",
        "sas url",
        "https://acme.blob.core.windows.net/c/f?sv=2022-11-02&se=2024-01-01&sp=r&sig=C0rpusSasSig%2Bnature0123456789%3D",
        "C0rpusSasSig",
        "https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sp=r",
    ),
    _shape(
        "azure",
        "service bus key",
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=C0rpusServiceBusKey0123456789abc=",
        "C0rpusServiceBusKey0123456789",
        "Endpoint=sb://acme.servicebus.windows.net/",
    ),
    _shape(
        "azure",
        "ad client secret",
        "client secret: Abc8Q~C0rpusAzureAdSecret0123456789abc",
        "C0rpusAzureAdSecret0123456789",
        "Q~ is not a secret on its own",
    ),
    # GitHub, GitLab
    _shape(
        "github",
        "classic token",
        "ghp_C0rpusGithubClassicTok3nAbcdefgh012345",
        "C0rpusGithubClassicTok3n",
        "ghp is a short word",
    ),
    _shape(
        "github",
        "oauth token",
        "gho_C0rpusGithubOauthTok3nAbcdefghij012345",
        "C0rpusGithubOauthTok3n",
        "gho_ost story",
    ),
    _shape(
        "github",
        "fine-grained token",
        "github_pat_11C0RPUS0FineGrained_Tok3nAbcdefghij",
        "FineGrained_Tok3nAbcdefghij",
        "github_pat_ is the prefix",
    ),
    _shape(
        "github",
        "token in a git url",
        "https://x-access-token:ghs_C0rpusGitUrlTok3nAbcdefghijklm012345@github.com/o/r.git",
        "C0rpusGitUrlTok3n",
        "https://github.com/o/r.git",
    ),
    _shape(
        "gitlab",
        "personal token",
        "glpat-C0rpusGitlabTok3nXyz0123",
        "C0rpusGitlabTok3nXyz",
        "glpat is a prefix",
    ),
    _shape(
        "gitlab",
        "runner token",
        "glrt-C0rpusGitlabRunnerTok3n0123",
        "C0rpusGitlabRunnerTok3n",
        "glrt- alone",
    ),
    _shape(
        "gitlab",
        "private-token header",
        "GET /api/v4/projects HTTP/1.1\r\nPRIVATE-TOKEN: C0rpusPrivT0kenVal\r\n",
        "C0rpusPrivT0kenVal",
        "GET /api/v4/projects HTTP/1.1\r\n",
    ),
    # Slack, Discord, Telegram
    _shape(
        "slack",
        "bot token",
        "xoxb-1111-2222-C0rpusSlackBotTok3n",
        "C0rpusSlackBotTok3n",
        "xoxo, gossip girl",
    ),
    _shape(
        "slack",
        "app token",
        "xapp-1-A0C0RPUS-1234-C0rpusSlackAppTok3nabcdef",
        "C0rpusSlackAppTok3n",
        "xapp is no token",
    ),
    _shape(
        "slack",
        "rotating token",
        "xoxe.xoxp-1-C0rpusSlackRefreshTok3nAbc",
        "C0rpusSlackRefreshTok3n",
        "xoxe is no token",
    ),
    _shape(
        "slack",
        "refresh token",
        "xoxe-1-C0rpusSlackXoxeTok3nAbcdef",
        "C0rpusSlackXoxeTok3n",
        "xoxe- alone",
    ),
    _shape(
        "slack",
        "webhook",
        "https://hooks.slack.com/services/T0C0RPUS/B0C0RPUS/C0rpusWebh00kS3cr3t",
        "C0rpusWebh00kS3cr3t",
        "https://slack.com/help",
    ),
    _shape(
        "discord",
        "webhook",
        "https://discord.com/api/webhooks/123456789012345678/C0rpusDiscordWebhookTok3n_abcdefghijklmnop",
        "C0rpusDiscordWebhookTok3n",
        "https://discord.com/channels/1/2",
    ),
    _shape(
        "telegram",
        "bot token",
        "https://api.telegram.org/bot7123456789:AAC0rpusTelegramBotTok3nAbcdefghijk/getMe",
        "C0rpusTelegramBotTok3n",
        "meet at 10:AA gate",
    ),
    # Payment and SaaS
    _shape(
        "stripe",
        "live secret key",
        "sk_live_C0rpusStr1peLiveKey0123",
        "C0rpusStr1peLiveKey",
        "sk_live_ is the prefix",
    ),
    _shape(
        "stripe",
        "restricted key",
        "rk_test_C0rpusStr1peRestricted01",
        "C0rpusStr1peRestricted",
        "rk_test_ prefix",
    ),
    _shape(
        "stripe",
        "webhook secret",
        "whsec_C0rpusStripeWebhookSecret0123456",
        "C0rpusStripeWebhookSecret",
        "whsec_ prefix",
    ),
    _shape(
        "twilio",
        "api key",
        "SK0123456789abcdef0123456789abcdef",
        "SK0123456789abcdef0123456789abcdef",
        "SKU-0042 ships",
    ),
    _shape(
        "twilio",
        "auth token assignment",
        "TWILIO_AUTH_TOKEN=c0rpus7w1l10auth70ken0123456789ab",
        "c0rpus7w1l10auth70ken",
        "TWILIO_ACCOUNT_REGION=us1",
    ),
    _shape(
        "sendgrid",
        "api key",
        "SG.C0rpusSendgridKeyId0.C0rpusSendgridKeySecret0123456789abcdefghijk",
        "C0rpusSendgridKeySecret",
        "see msg.SG.id",
    ),
    _shape(
        "mailgun",
        "api key",
        "key-0123456789abcdef0123456789abcdef",
        "0123456789abcdef0123456789abcdef",
        "key-value store",
    ),
    _shape(
        "heroku",
        "api key",
        "HRKU-C0rpusHerokuApiKey0123456789abcdef",
        "C0rpusHerokuApiKey",
        "HRKU- prefix",
    ),
    _shape(
        "shopify",
        "access token",
        "shpat_0123456789abcdef0123456789abcdef",
        "shpat_0123456789abcdef0123456789abcdef",
        "shpat_ is a prefix",
    ),
    _shape(
        "vault",
        "token",
        "VAULT_ADDR=https://v:8200 token hvs.C0rpusVaultTok3nAbcdefghij0123",
        "C0rpusVaultTok3n",
        "hvs. alone",
    ),
    _shape(
        "digitalocean",
        "token",
        "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "0123456789abcdef0123456789abcdef0123456789abcdef",
        "dop_v1_ prefix",
    ),
    _shape(
        "huggingface",
        "token",
        "hf_C0rpusHuggingFaceTok3nAbcdefghij0123",
        "C0rpusHuggingFaceTok3n",
        "hf_ prefix",
    ),
    _shape(
        "openai",
        "project key",
        "sk-proj-C0rpusOpenAiProjKeyAbcdef0123",
        "C0rpusOpenAiProjKey",
        "a risk-based approach, task-sk-abc",
    ),
    _shape(
        "openai",
        "key glued after an underscore",
        "OPENAI_KEY_sk-proj-C0rpusGluedOpenAiKeyAbc0123",
        "C0rpusGluedOpenAiKey",
        "OPENAI_KEY_NAME=default",
    ),
    _shape(
        "openai",
        "key broken by a line break",
        "key: sk-proj-C0rpusBrokenKeyFirstHalf0123\nC0rpusBrokenKeySecondHalf9876\n",
        ("C0rpusBrokenKeyFirstHalf", "C0rpusBrokenKeySecondHalf"),
        "key: none\nSecondLine here\n",
    ),
    _shape(
        "anthropic",
        "api key",
        "sk-ant-api03-C0rpusAnthropicKeyAbcdEFGH",
        "C0rpusAnthropicKey",
        "sk-ant- prefix",
    ),
    # Registries
    _shape(
        "npm",
        "token",
        "npm_C0rpusNpmTok3nAbcdefghijklmnopqr0123",
        "C0rpusNpmTok3n",
        "npm_config_cache=/tmp",
    ),
    _shape(
        "npm",
        "npmrc auth token",
        "//registry.npmjs.org/:_authToken=C0rpusNpmrcTok3nValue\n",
        "C0rpusNpmrcTok3nValue",
        "//registry.npmjs.org/:always-auth=true\n",
    ),
    _shape(
        "pypi",
        "token in prose",
        "upload with pypi-AgEIcHlwaS5vcmcCJC0rpusPypiTok3nAbcdefghijklmnopqrstuvwxyz0123456789",
        "C0rpusPypiTok3n",
        "pip install pypi-simple",
    ),
    _shape(
        "pypi",
        "pypirc password",
        "[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmcCJC0rpusPypircTok3nAbcdefghijklmnopqrstuvwxyz012345\n",
        "C0rpusPypircTok3n",
        "[pypi]\nusername = __token__\n",
    ),
    _shape(
        "docker",
        "hub token",
        "dckr_pat_C0rpusDockerHubTok3nAbcdef01",
        "C0rpusDockerHubTok3n",
        "dckr_pat_ prefix",
    ),
    _shape(
        "docker",
        "config auth",
        json.dumps(
            {"auths": {"https://index.docker.io/v1/": {"auth": _b64("ana:C0rpusDockerAuthPw")}}}
        ),
        _b64("ana:C0rpusDockerAuthPw")[4:20],
        json.dumps({"auths": {}, "credsStore": "desktop"}),
    ),
    _shape(
        "docker",
        "dockerconfigjson",
        ".dockerconfigjson: "
        + _b64(json.dumps({"auths": {"r.io": {"auth": _b64("u:C0rpusDcjPw")}}})),
        _b64(json.dumps({"auths": {"r.io": {"auth": _b64("u:C0rpusDcjPw")}}}))[12:40],
        "type: kubernetes.io/dockerconfigjson",
    ),
    # Tokens
    _shape("jwt", "jwt", _JWT, "C0rpusJwtSignatureValue01", "eyJ alone is no token"),
    _shape(
        "jwt",
        "jwe",
        _JWE,
        (
            "5eym8TW_c8SuK0ltJ3rpYIzOeDQz7TALvtu6UG9oMo4vpzs9tX_EFShS8iB7j6ji",
            "XFBoMYUZodetZdvTiFvSkQ",
        ),
        "version 1.2.3.4.5",
    ),
    _shape(
        "jwt",
        "bearer header",
        "Authorization: Bearer C0rpusBearerTok3nValue99",
        "C0rpusBearerTok3nValue99",
        "the bearer of bad news",
    ),
    _shape(
        "jwt",
        "raw authorization in a header map",
        json.dumps({"headers": {"Authorization": "c0rpusRawAuthHeaderValue0123", "Accept": "*/*"}}),
        "c0rpusRawAuthHeaderValue0123",
        json.dumps(
            {"headers": {"Accept": "*/*", "X-Request-Id": "8f14e45f-ceea-467f-a4a8-1a2b3c4d5e6f"}}
        ),
    ),
    _shape(
        "jwt",
        "token authorization scheme",
        "Authorization: Token 9944b09199c62bcf9418ad846dd0c0rp",
        "9944b09199c62bcf9418ad846dd0c0rp",
        "Authorization failed for user ana",
    ),
    _shape(
        "jwt",
        "jwt as a query parameter",
        "GET /api/v1/turns?conversation_id=" + _JWT,
        "C0rpusJwtSignatureValue01",
        "GET /api/v1/turns?conversation_id=conv-0042",
    ),
    _shape(
        "jwt",
        "cookie header",
        "Cookie: sessionid=C0rpusSessionCookie77; theme=dark",
        "C0rpusSessionCookie77",
        "cookie policy: accept all",
    ),
    _shape(
        "jwt",
        "basic auth header",
        "Authorization: Basic " + _b64("ana:C0rpusBasicPw"),
        _b64("ana:C0rpusBasicPw"),
        "Basic plan: 10 seats",
    ),
    # Private keys
    _shape(
        "private key",
        "rsa pem",
        _RSA,
        "MIIEpAIBAAKCAQEAc0rpusRsaKeyBody",
        "-----BEGIN CERTIFICATE----- is public",
    ),
    _shape(
        "private key",
        "openssh",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAC0rpusSsh\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAC0rpusSsh",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 ana@laptop",
    ),
    _shape(
        "private key",
        "pgp block",
        _PGP,
        "lQOYBGC0rpusPgpKeyBody",
        "-----BEGIN PGP PUBLIC KEY BLOCK----- is public",
    ),
    _shape(
        "private key",
        "encrypted pkcs8",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqC0rpusEnc\n-----END ENCRYPTED PRIVATE KEY-----",
        "MIIFHDBOBgkqC0rpusEnc",
        "ENCRYPTED at rest",
    ),
    _shape(
        "private key",
        "kubeconfig client key data",
        "users:\n- name: admin\n  user:\n    client-key-data: " + _b64(_RSA),
        _b64(_RSA)[40:80],
        "users:\n- name: admin\n  user:\n    client-certificate-data: none",
    ),
    _shape(
        "private key",
        "pem in a json field",
        json.dumps({"key": _RSA}),
        "MIIEpAIBAAKCAQEAc0rpusRsaKeyBody",
        json.dumps({"key": "value"}),
    ),
    # Kubernetes, files
    _shape(
        "kubernetes",
        "secret yaml",
        "apiVersion: v1\ndata:\n  DB_URL: "
        + _b64("postgres://u:C0rpusK8sDbPw@db/app")
        + "\n  username: YWRtaW4=\nkind: Secret\nmetadata:\n  name: db\n",
        _b64("postgres://u:C0rpusK8sDbPw@db/app")[8:40],
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db\n",
    ),
    _shape(
        "kubernetes",
        "secret json",
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "data": {"API_URL": _b64("https://C0rpusK8sJsonVal.example")},
            }
        ),
        _b64("https://C0rpusK8sJsonVal.example")[8:36],
        json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}}),
    ),
    _shape(
        "kubernetes",
        "base64 wrapped env",
        "echo " + _b64(_ENV) + " | base64 -d > .env",
        _b64(_ENV)[16:48],
        "echo aGVsbG8gd29ybGQ= | base64 -d",
    ),
    _shape(
        "files",
        "netrc",
        "machine api.example.com login ana password C0rpusNetrcPw\n",
        "C0rpusNetrcPw",
        "machine api.example.com login ana\n",
    ),
    _shape(
        "files",
        "netrc multi-line",
        "machine git.example.com\n  login ana\n  password C0rpusNetrc2Pw\n",
        "C0rpusNetrc2Pw",
        "machine git.example.com\n  login ana\n",
    ),
    _shape(
        "files",
        "pgpass",
        "db.example.com:5432:app:ana:C0rpusPgpassPw\n",
        "C0rpusPgpassPw",
        "db.example.com:5432 is up\n",
    ),
    _shape(
        "files",
        "pgpass wildcard",
        "*:*:*:postgres:C0rpusPgpassWildPw\n",
        "C0rpusPgpassWildPw",
        "ratio *:* any\n",
    ),
    _shape(
        "files",
        "git credentials",
        "https://ana:C0rpusGitCredPw@github.com\n",
        "C0rpusGitCredPw",
        "https://github.com/ana\n",
    ),
    # Command lines
    _shape(
        "cli",
        "curl -u",
        "curl -u ana:C0rpusCurlPw https://api.example.com",
        "C0rpusCurlPw",
        "sudo -u postgres psql",
    ),
    _shape(
        "cli",
        "curl --user",
        "curl --user ana:C0rpusCurlUserPw https://x",
        "C0rpusCurlUserPw",
        "curl --user-agent x https://x",
    ),
    _shape(
        "cli",
        "psql password variable",
        "PGPASSWORD=C0rpusPsqlPw psql -h db -U app",
        "C0rpusPsqlPw",
        "psql --password -h db -U app",
    ),
    _shape(
        "cli",
        "mysql glued password",
        "mysql -u root -pC0rpusMysqlPw shop",
        "C0rpusMysqlPw",
        "mysql -u root -p shop",
    ),
    _shape(
        "cli",
        "mysqldump password",
        "mysqldump --user=root --password=C0rpusDumpPw shop",
        "C0rpusDumpPw",
        "mysqldump --user=root shop",
    ),
    _shape(
        "cli",
        "password flag",
        "vault login --password 'C0rpus Flag Pw' --method=userpass",
        "C0rpus Flag Pw",
        "--password-file /run/secret",
    ),
    _shape(
        "cli",
        "token flag",
        "gh auth login --token=C0rpusTokenFlag77",
        "C0rpusTokenFlag77",
        "gh auth status --show-token-scopes",
    ),
    _shape(
        "cli",
        "docker login -p",
        "docker login -u ana --password C0rpusDockerLoginPw registry.io",
        "C0rpusDockerLoginPw",
        "docker login registry.io",
    ),
    # URLs
    _shape(
        "url",
        "database url",
        "postgres://app:C0rpusDbUrlPw@db:5432/shop",
        "C0rpusDbUrlPw",
        "postgres://db:5432/shop",
    ),
    _shape(
        "url",
        "password with @ and /",
        "postgres://app:C0rpus@Pass/W0rd@db:5432/shop",
        ("C0rpus@Pass/W0rd", "Pass/W0rd"),
        "https://example.com:8080/a@b",
    ),
    _shape(
        "url",
        "redis url without user",
        "REDIS_URL=redis://:C0rpusRedisPw@cache:6379",
        "C0rpusRedisPw",
        "REDIS_URL=redis://cache:6379",
    ),
    _shape(
        "url",
        "api key in a query",
        "https://api.example.com/v1?api_key=C0rpusQueryKey77&x=1",
        "C0rpusQueryKey77",
        "https://api.example.com/v1?api_version=2&x=1",
    ),
    _shape(
        "url",
        "access token in a query",
        "https://example.com/cb?access_token=C0rpusQueryTok99",
        "C0rpusQueryTok99",
        "https://example.com/cb?token_type=bearer",
    ),
    _shape(
        "url",
        "key in a search query",
        "GET /api/v1/turns?q=sk-proj-C0rpusSearchQueryKey0123",
        "C0rpusSearchQueryKey",
        "GET /api/v1/turns?q=risk-based",
    ),
    # Generic assignments
    _shape(
        "generic",
        "env password",
        "DB_PASSWORD=C0rpusEnvDbPw",
        "C0rpusEnvDbPw",
        "DB_PASSWORD_RESET_URL_TEMPLATE",
    ),
    _shape(
        "generic",
        "secret key base",
        "SECRET_KEY_BASE=c0rpus5ecretKeyBase0123456789abcdef",
        "c0rpus5ecretKeyBase",
        "SECRET_KEY_BASE_LENGTH",
    ),
    _shape(
        "generic",
        "yaml redis pass",
        "redis:\n  REDIS_PASS: C0rpusRedisPass\n",
        "C0rpusRedisPass",
        "redis:\n  REDIS_PORT: 6379\n",
    ),
    _shape(
        "generic",
        "json passphrase",
        json.dumps({"passphrase": "C0rpus pass phrase"}),
        "C0rpus pass phrase",
        json.dumps({"passphrase_hint": True}),
    ),
    _shape(
        "generic",
        "json encryption key",
        json.dumps({"encryption_key": "C0rpusEncKey0123"}),
        "C0rpusEncKey0123",
        json.dumps({"encryption_algorithm": "aes-256-gcm"}),
    ),
    _shape(
        "generic",
        "json password",
        json.dumps({"user": "ana", "password": "C0rpus hunter two"}),
        "C0rpus hunter two",
        json.dumps({"password_reset_url": "https://example.com/reset"}),
    ),
    _shape(
        "generic",
        "json api key",
        json.dumps({"api_key": "C0rpusApiKeyJson"}),
        "C0rpusApiKeyJson",
        json.dumps({"token_count": 12}),
    ),
    _shape(
        "generic",
        "json client secret",
        json.dumps({"client_id": "abc", "client_secret": "C0rpusClientSecret"}),
        "C0rpusClientSecret",
        json.dumps({"client_id": "8f14e45f-ceea-467f-a4a8-1a2b3c4d5e6f"}),
    ),
    _shape(
        "generic",
        "json access token",
        json.dumps({"access_token": "C0rpusAccessTokJson", "expires_in": 3600}),
        "C0rpusAccessTokJson",
        json.dumps({"token_type": "Bearer", "expires_in": 3600}),
    ),
    _shape(
        "generic",
        "yaml password",
        "database:\n  password: C0rpusYamlPw\n",
        "C0rpusYamlPw",
        "database:\n  password_min_length: 12\n",
    ),
    _shape(
        "generic",
        "yaml secret",
        'oauth:\n  secret: "C0rpusYamlSecret"\n',
        "C0rpusYamlSecret",
        "oauth:\n  secret_rotation_days: 90\n",
    ),
    _shape(
        "generic",
        "ini password",
        "[db]\npassword = C0rpusIniPw\n",
        "C0rpusIniPw",
        "[db]\npool_size = 10\n",
    ),
    _shape(
        "generic",
        "toml token",
        'token = "C0rpusTomlTok3n"\n',
        "C0rpusTomlTok3n",
        "token_count = 12\n",
    ),
    _shape(
        "generic",
        "python kwarg",
        "connect(user='ana', password='C0rpusKwargPw')",
        "C0rpusKwargPw",
        "connect(user='ana', timeout=30)",
    ),
    _shape(
        "generic",
        "env github token",
        "GITHUB_TOKEN=C0rpusEnvGhTok",
        "C0rpusEnvGhTok",
        "GITHUB_REPOSITORY=o/r",
    ),
    _shape(
        "generic",
        "env credentials",
        "GOOGLE_CREDENTIALS=C0rpusGoogleCreds",
        "C0rpusGoogleCreds",
        "GOOGLE_PROJECT=shop",
    ),
    _shape(
        "generic",
        "private key assignment",
        "private_key: C0rpusPrivKeyAssigned",
        "C0rpusPrivKeyAssigned",
        "private_key_path: /etc/key.pem",
    ),
    _shape(
        "generic",
        "signing key",
        json.dumps({"signing_key": "C0rpusSigningKey0"}),
        "C0rpusSigningKey0",
        json.dumps({"signing_algorithm": "RS256"}),
    ),
    _shape(
        "generic",
        "password in prose after a line break",
        "host=db\npassword=C0rpusEscPw\n",
        "C0rpusEscPw",
        "host=db\nport=5432\n",
    ),
)
"""The corpus: at least one shape per family the rules know."""
