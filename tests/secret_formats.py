"""Fake but format-valid credentials, one per format, assembled from pieces at import time.

No token stands in this file in one piece: each is a known prefix plus characters derived
from a hash of its name, so the file itself trips no secret scanner.
"""

from __future__ import annotations

import base64
import hashlib
import string

LOWER_HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
BASE64 = ALNUM + "+/"


def chars(name: str, count: int, alphabet: str = ALNUM) -> str:
    """`count` characters of `alphabet`, fixed by `name` (digits and both cases all appear)."""
    out = ""
    block = 0
    while len(out) < count:
        digest = hashlib.sha256(f"{name}:{block}".encode()).digest()
        out += "".join(alphabet[byte % len(alphabet)] for byte in digest)
        block += 1
    return (out[: count - 3] + alphabet[-1] + alphabet[0] + alphabet[len(alphabet) // 2])[:count]


def jwt() -> str:
    """A well-formed JWT: two base64url JSON objects and a signature."""
    header, claims = b'{"alg":"HS256","typ":"JWT"}', b'{"sub":"4242","admin":true}'
    pieces = [base64.urlsafe_b64encode(data).rstrip(b"=").decode() for data in (header, claims)]
    return ".".join([*pieces, chars("jwt", 43, URLSAFE)])


def block(kind: str) -> str:
    """A private key block of `kind` with a fake base64 body."""
    body = "\n".join(chars(f"{kind}{n}", 64, BASE64) for n in range(3))
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


UUID = "-".join(chars("heroku", n, LOWER_HEX) for n in (8, 4, 4, 4, 12))
ACCOUNT_KEY = chars("azure", 86, BASE64) + "=="
PASSWORD = "Hx7" + chars("password", 17)
"""A generated password, for the formats that hold one."""
DOCKER_AUTH = base64.b64encode(f"deploy:{chars('docker', 20)}".encode()).decode()

FORMATS: list[tuple[str, str, str, str]] = [
    # (name, kind named by the marker, the secret, a line holding it)
    ("aws-access-key-id", "aws-access-key", "AK" + "IA" + chars("aws", 16, string.ascii_uppercase + string.digits),
     "aws_access_key_id = {}"),
    ("aws-secret-access-key", "aws-access-key", chars("aws-secret", 40, BASE64), 'aws_secret_access_key = "{}"'),
    ("github-classic", "github-token", "gh" + "p_" + chars("ghp", 36), "git remote set-url origin https://{}@github.com/a/b"),
    ("github-oauth", "github-token", "gh" + "o_" + chars("gho", 36), "token {}"),
    ("github-fine-grained", "github-token", "github_" + "pat_" + chars("pat1", 22) + "_" + chars("pat2", 59), "GH_TOKEN is {}"),
    ("gitlab-personal", "gitlab-token", "gl" + "pat-" + chars("glpat", 20), "PRIVATE-TOKEN: {}"),
    ("gitlab-runner", "gitlab-token", "gl" + "rt-" + chars("glrt", 20), "runner registered with {}"),
    ("slack-bot", "slack-token", "xo" + "xb-" + chars("s1", 11, string.digits) + "-" + chars("s2", 12, string.digits)
     + "-" + chars("s3", 24, string.ascii_lowercase + string.digits), "SLACK: {}"),
    ("slack-webhook", "slack-token", "T" + chars("t", 8, string.ascii_uppercase) + "/B" + chars("b", 8, string.ascii_uppercase)
     + "/" + chars("w", 24), "post to https://hooks.slack.com/" + "services/{}"),
    ("stripe-live", "stripe-access-key", "sk" + "_live_" + chars("stripe", 24), "stripe.api_key = {}"),
    ("stripe-restricted", "stripe-access-key", "rk" + "_live_" + chars("rk", 24), "restricted {}"),
    ("openai-project", "openai-key", "sk-" + "proj-" + chars("proj", 48, URLSAFE), "export default {{ key: '{}' }}"),
    ("openai-legacy", "openai-token", "sk-" + chars("oa1", 20) + "T3Blbk" + "FJ" + chars("oa2", 20), "OPENAI says {} is set"),
    ("anthropic", "anthropic-key", "sk-" + "ant-api03-" + chars("ant", 93, URLSAFE) + "AA", "curl -H 'x-api-key: {}'"),
    ("google-api", "google-key", "AI" + "za" + chars("google", 35, URLSAFE), "maps?key={}&q=1"),
    ("hugging-face", "hugging-face-token", "hf" + "_" + chars("hf", 34), "HF says {} works"),
    ("npm-bare", "npm-token", "np" + "m_" + chars("npm", 36), "publish with {}"),
    ("npm-npmrc", "npm-tokens", "np" + "m_" + chars("npmrc", 36), "//registry.npmjs.org/:_authToken={}"),
    ("pypi", "pypi-token", "pypi-" + "AgEIcHlwaS5vcmc" + chars("pypi", 80, URLSAFE), "password = {}"),
    ("sendgrid", "sendgrid-api-key", "SG" + "." + chars("sg1", 22, URLSAFE) + "." + chars("sg2", 43, URLSAFE), "mail via {}"),
    ("twilio-api-key", "twilio-api-key", "S" + "K" + chars("tw", 32, LOWER_HEX), "twilio {}"),
    ("twilio-account", "twilio-api-key", "A" + "C" + chars("ac", 32, LOWER_HEX), "account {}"),
    ("telegram-bot", "telegram-bot-token", chars("tg1", 10, string.digits) + ":" + "AA" + chars("tg2", 33, URLSAFE),
     "bot {} answers"),
    ("azure-storage", "azure-storage-account-access-key", "AccountKey=" + ACCOUNT_KEY,
     "DefaultEndpointsProtocol=https;AccountName=store1;{};EndpointSuffix=core.windows.net"),
    ("azure-service-bus", "azure-connection-string", chars("bus", 43, BASE64) + "=",
     "Endpoint=sb://ns1.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={}"),
    ("discord-webhook", "discord-webhook", chars("dw", 68, URLSAFE),
     "https://discord.com/api/webhooks/" + chars("dwid", 18, string.digits) + "/{}"),
    ("discord-bot", "discord-bot-token", "M" + chars("db1", 23, URLSAFE) + "." + chars("db2", 6, URLSAFE) + "."
     + chars("db3", 27, URLSAFE), "Bot {}"),
    ("docker-auth", "docker-auth", DOCKER_AUTH, '{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{}"}}}}}}'),
    ("heroku", "heroku-key", UUID, "HEROKU_API_KEY={}"),
    ("mailchimp", "mailchimp-access-key", chars("mc", 32, LOWER_HEX) + "-us6", "mailchimp key {}"),
    ("square", "square-oauth-secret", "sq0" + "csp-" + chars("sq", 43, URLSAFE), "square {}"),
    ("rsa-private-key", "private-key", block("RSA PRIVATE KEY"), "key file:\n{}\nend"),
    ("openssh-private-key", "private-key", block("OPENSSH PRIVATE KEY"), "{}"),
    ("pgp-private-key", "private-key", block("PGP PRIVATE KEY BLOCK"), "{}"),
    ("jwt", "json-web-token", jwt(), "cookie session={}; Path=/"),
    ("url-password", "basic-auth-credentials", chars("dbpw", 14), "DATABASE_URL=postgres://app:{}@db:5432/main"),
    ("bearer", "bearer-token", "ya29." + chars("bearer", 40, URLSAFE), "Authorization: Bearer {}"),
    ("password-assignment", "assignment", "Tr0ub4dor-" + chars("pw", 6), 'db.password: "{}"'),
    ("env-line", "env-line", chars("env", 24, URLSAFE), "export MY_SERVICE_API_KEY={}"),
    ("aws-documented-example", "env-line", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
     "export AWS_SECRET_ACCESS_KEY={}"),
    ("artifactory", "artifactory-credentials", "AKC" + chars("art", 70), "X-JFrog-Art-Api: {}"),
    ("ibm-cloud-iam", "ibm-cloud-iam-key", chars("iam", 44, URLSAFE), "ibm_cloud_iam_api_key = '{}'"),
    ("ibm-cos-hmac", "ibm-cos-hmac-credentials", chars("cos", 48, LOWER_HEX), "cos_hmac_secret_access_key: '{}'"),
    ("cloudant", "basic-auth-credentials", chars("cloudant", 64, LOWER_HEX), "https://admin:{}@acct.cloudant.com"),
    ("softlayer", "softlayer-credentials", chars("softlayer", 64, LOWER_HEX), "https://api.softlayer.com/soap/v3/{}"),
    ("service-account-key-id", "assignment", chars("pkid", 40, LOWER_HEX),
     '{{"type": "service_account", "private_key_id": "{}", "client_email": "ci@p.iam.gserviceaccount.com"}}'),
    ("service-account-private-key", "private-key", chars("gsa", 64, BASE64),
     '{{"private_key": "-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n"}}'),
    ("redis-url-password", "url-credentials", PASSWORD, "REDIS_URL=redis://:{}@cache:6379/0"),
    ("mongodb-srv", "basic-auth-credentials", PASSWORD, "mongodb+srv://app:{}@cluster0.ab1cd.mongodb.net/db"),
    ("sql-server-connection", "url-secret-parameter", PASSWORD, "Server=tcp:db1.database.windows.net;User ID=app;Password={};"),
    ("s3-presigned-url", "url-secret-parameter", chars("amzsig", 64, LOWER_HEX),
     "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature={}"),
    ("azure-sas-url", "url-secret-parameter", chars("sas", 43, BASE64),
     "https://acct.blob.core.windows.net/c/f?sv=2021-08-06&sp=r&sig={}%3D"),
    ("teams-webhook", "webhook-url", chars("teams", 32, LOWER_HEX),
     "https://contoso.webhook.office.com/webhookb2/IncomingWebhook/{}"),
    ("zapier-webhook", "webhook-url", chars("zap", 12, string.ascii_lowercase + string.digits),
     "https://hooks.zapier.com/hooks/catch/1234567/{}/"),
    ("mysql-password-flag", "command-line-secret", PASSWORD, "mysql -u root -p{} main"),
    ("password-flag", "command-line-secret", PASSWORD, "./deploy.sh --password {} --host db1"),
    ("sshpass", "command-line-secret", PASSWORD, "sshpass -p '{}' ssh deploy@db1"),
    ("curl-user", "command-line-secret", PASSWORD, "curl -u admin:{} https://api.internal/v1"),
    ("docker-login", "vendor-token", "dckr" + "_pat_" + chars("dckr", 27, URLSAFE), "docker login -u me -p {}"),
    ("rubygems", "vendor-token", "rubygems" + "_" + chars("rg", 48, LOWER_HEX), "GEM_HOST_API_KEY is {}"),
    ("nuget", "vendor-token", "oy2" + chars("nuget", 43, string.ascii_lowercase + string.digits), "nuget push -ApiKey {}"),
    ("digitalocean", "vendor-token", "dop" + "_v1_" + chars("do", 64, LOWER_HEX), "doctl auth init -t {}"),
    ("alibaba", "vendor-token", "LT" + "AI" + chars("ali", 20), "accessKeyId {}"),
    ("slack-app", "vendor-token", "xa" + "pp-1-A" + chars("x1", 10, string.ascii_uppercase + string.digits) + "-"
     + chars("x2", 13, string.digits) + "-" + chars("x3", 64, LOWER_HEX), "SLACK_APP {}"),
    ("vault", "vendor-token", "hv" + "s." + chars("hvs", 90, URLSAFE), "vault login {}"),
    ("sentry-dsn", "url-credentials", chars("sentry", 32, LOWER_HEX), "dsn: 'https://{}@o123.ingest.sentry.io/456'"),
    ("netrc-password", "spoken-password", PASSWORD, "machine api.heroku.com login me@x.io password {}"),
    ("assignment-split-across-lines", "assignment", PASSWORD, 'db_password =\n    "{}"'),
    ("yaml-value-on-next-line", "assignment", PASSWORD, "database:\n  password:\n    {}\n"),
    ("heroku-named-before", "heroku-key", "-".join(chars("heroku-cli", n, LOWER_HEX) for n in (8, 4, 4, 4, 12)),
     "heroku auth:token printed {} for the deploy"),
    ("heroku-named-after", "heroku-key", "-".join(chars("heroku-after", n, LOWER_HEX) for n in (8, 4, 4, 4, 12)),
     "use {} (that is the Heroku one)"),
    ("snyk-token", "snyk-key", "-".join(chars("snyk", n, LOWER_HEX) for n in (8, 4, 4, 4, 12)), "SNYK_TOKEN is {}"),
    ("datadog-api-key", "datadog-key", chars("datadog", 32, LOWER_HEX), "DD_API_KEY: {}"),
    ("sentry-auth-token", "sentry-key", chars("sentry-auth", 64, LOWER_HEX), "sentry-cli login --auth-token {}"),
]
"""74 formats; `kind` is what the marker names (detect-secrets' secret type, or our rule's name). Every
detect-secrets regex plugin has one at least, multi-line keys and assignments split across lines among them."""
