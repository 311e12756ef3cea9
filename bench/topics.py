"""What a team asks in a day: the topics of the day scenario (bench/stream.py draws from them).

Each topic is one meaning. A task topic ("How do I <verb> a <object> in <product>?") comes in
forms that differ only in case, punctuation, "how do I"/"how to", articles, "please" and
plurals (the bot's question key should merge those) and in reworded forms that mean the same
but use other words (a key that only drops form cannot merge them; each costs its own call).
Near-miss topics are *different* questions that look alike — another verb, another product,
another version number — which must never share an answer: "create" / "delete a bucket",
"Cloud Run" / "App Engine", "Python 3.11" / "3.12", "HTTP/2" / "HTTP/3".
"""

from __future__ import annotations

from dataclasses import dataclass

#: (verb, object, its plural, product); objects of letters only, so the key's plural rule applies
TASKS: tuple[tuple[str, str, str, str], ...] = (
    ("create", "bucket", "buckets", "Cloud Storage"),
    ("delete", "bucket", "buckets", "Cloud Storage"),  # near-miss: the verb
    ("deploy", "service", "services", "Cloud Run"),
    ("deploy", "function", "functions", "Cloud Functions"),
    ("rotate", "key", "keys", "Cloud KMS"),
    ("create", "topic", "topics", "Pub/Sub"),
    ("create", "subscription", "subscriptions", "Pub/Sub"),
    ("grant", "role", "roles", "IAM"),
    ("revoke", "role", "roles", "IAM"),  # near-miss: the verb
    ("schedule", "query", "queries", "BigQuery"),
    ("partition", "table", "tables", "BigQuery"),
    ("export", "table", "tables", "BigQuery"),  # near-miss: the verb
    ("create", "index", "indexes", "Firestore"),
    ("delete", "index", "indexes", "Firestore"),  # near-miss: the verb
    ("create", "cluster", "clusters", "GKE"),
    ("upgrade", "cluster", "clusters", "GKE"),  # near-miss: the verb
    ("create", "secret", "secrets", "Secret Manager"),
    ("enable", "API", "APIs", "Google Cloud"),
    ("disable", "API", "APIs", "Google Cloud"),  # near-miss: the verb
    ("attach", "disk", "disks", "Compute Engine"),
    ("resize", "disk", "disks", "Compute Engine"),  # near-miss: the verb
    ("create", "snapshot", "snapshots", "Compute Engine"),
    ("create", "instance", "instances", "Cloud SQL"),
    ("restore", "backup", "backups", "Cloud SQL"),
    ("create", "repository", "repositories", "Artifact Registry"),
    ("create", "trigger", "triggers", "Cloud Build"),
    ("create", "alert", "alerts", "Cloud Monitoring"),
    ("create", "dashboard", "dashboards", "Cloud Monitoring"),
    ("create", "sink", "sinks", "Cloud Logging"),
    ("add", "domain", "domains", "Firebase Hosting"),
    ("map", "domain", "domains", "Cloud Run"),  # near-miss: the product
    ("map", "domain", "domains", "App Engine"),  # near-miss: the product
    ("deploy", "site", "sites", "Firebase Hosting"),
    ("create", "endpoint", "endpoints", "Vertex AI"),
    ("deploy", "model", "models", "Vertex AI"),
    ("create", "queue", "queues", "Cloud Tasks"),
    ("create", "job", "jobs", "Cloud Scheduler"),
    ("create", "database", "databases", "Spanner"),
    ("add", "user", "users", "Firebase Authentication"),
    ("create", "network", "networks", "VPC"),
    ("reserve", "address", "addresses", "Compute Engine"),
    ("create", "policy", "policies", "Organization Policy"),
    ("create", "branch", "branches", "Cloud Source Repositories"),
    ("set", "budget", "budgets", "Cloud Billing"),
    ("create", "certificate", "certificates", "Certificate Manager"),
    ("create", "bucket", "buckets", "Firebase Storage"),  # near-miss: the product
    ("label", "resource", "resources", "Resource Manager"),
    ("create", "workstation", "workstations", "Cloud Workstations"),
    ("create", "connector", "connectors", "Serverless VPC Access"),
    ("create", "template", "templates", "Dataflow"),
    ("launch", "template", "templates", "Dataflow"),  # near-miss: the verb
    ("create", "notebook", "notebooks", "Vertex AI Workbench"),
    ("create", "webhook", "webhooks", "Dialogflow"),
    ("create", "channel", "channels", "Firebase Cloud Messaging"),
)

#: questions that are not "<verb> a <object>": their forms are case, punctuation, "please"
GENERAL: tuple[str, ...] = (
    "Why does Cloud Run return 503 errors?",  # the incident of the day (first: see INCIDENT)
    "What is the difference between Cloud Run and GKE?",
    "Which region should I choose for Firestore?",
    "How does Pub/Sub message ordering work?",
    "Why is my Cloud Build slow?",
    "What does the roles/editor role allow?",
    "When should I use Spanner instead of Cloud SQL?",
    "How much does Cloud Storage Nearline cost?",
    "Is Firestore strongly consistent?",
    "How many requests can one Cloud Run instance handle?",
    "What is the maximum object size in Cloud Storage?",
    "How long does Cloud Logging keep logs?",
    "Can Cloud Functions connect to a VPC?",
    "How do I authenticate to the Gemini API with an API key?",
    "Does GKE Autopilot support GPUs?",
    "How do I use Python 3.11 in Cloud Functions?",
    "How do I use Python 3.12 in Cloud Functions?",  # near-miss: the number
    "How do I enable HTTP/2 on an external load balancer?",
    "How do I enable HTTP/3 on an external load balancer?",  # near-miss: the number
    "How do I run Node.js 20 on App Engine?",
    "How do I run Node.js 22 on App Engine?",  # near-miss: the number
    "Why does my Firebase deploy fail with a 403 error?",
    "What quota does the Maps JavaScript API have?",
    "How do I migrate from Container Registry to Artifact Registry?",
    "What is the SLA of Cloud SQL?",
    "How do I set up Workload Identity Federation for GitHub Actions?",
    "What is the default request timeout of Cloud Run?",
    "How do I stream logs from Cloud Run?",
    "How do I trigger a Cloud Run job on a schedule?",
    "What is the free tier of BigQuery?",
    "How do I call Vertex AI from a Cloud Function?",
    "Why is my Firestore query missing an index?",
    "How do I share a Looker Studio report?",
    "What is the retention of Pub/Sub messages?",
)
INCIDENT = 0  # GENERAL[INCIDENT] is what everyone asks when production breaks

#: short keyword lookups: fewer than four words, no question mark, no question word
KEYWORDS: tuple[str, ...] = (
    "firestore pricing",
    "cloud run quotas",
    "bigquery slots",
    "gke autopilot",
    "iam conditions",
    "pubsub retention",
    "vertex ai pricing",
    "cloud sql backups",
    "artifact registry cleanup",
    "cloud cdn",
    "spanner limits",
    "kms locations",
)

#: Google Pay & Wallet questions (the bot routes them to Pay, or to search without OAuth)
PAY: tuple[str, ...] = (
    "How do I add a Google Wallet pass to my Android app?",
    "What does PaymentDataRequest need for Google Pay on the web?",
    "How do I test Google Pay payment tokens?",
    "Which payment gateway works with Google Pay in Italy?",
)

#: follow-ups asked in the thread of an earlier answer (each one once, so each is unique)
FOLLOW_UPS: tuple[str, ...] = (
    "what about in Go?",
    "and with Terraform?",
    "what about doing it from the gcloud CLI?",
    "how about in Python?",
    "what if it is in another project?",
    "and for Java?",
    "what about the console?",
    "how about with the REST API?",
    "what about in Node.js?",
    "and from a GitHub Actions workflow?",
    "what if I use a service account?",
    "what about in C#?",
    "and with Pulumi?",
    "what about the cost of that?",
    "how about inside a VPC?",
    "what about in Ruby?",
    "and with the Python client library?",
    "what if the region is europe-west1?",
)


@dataclass(frozen=True)
class Topic:
    """One meaning, and the ways people type it."""

    id: str
    kind: str  # question | keyword | pay | followup
    canonical: str
    #: forms that differ from `canonical` only in what the question key drops
    forms: tuple[str, ...] = ()
    #: the same meaning in other words (a key that drops only form keeps them apart)
    reworded: tuple[str, ...] = ()


def task_topic(topic_id: str, verb: str, obj: str, plural: str, product: str) -> Topic:
    article = "an" if obj[0].lower() in "aeiou" else "a"
    canonical = f"How do I {verb} {article} {obj} in {product}?"
    forms = (
        f"how to {verb} {plural} in {product}",
        f"How can I {verb} the {obj} in {product}?",
        f"{verb.capitalize()} {article} {obj} in {product}, please",
        canonical.upper().replace("?", "??"),
        f"how do i {verb} {plural} in {product.lower()}?",
        f"  How do I  {verb} {article} {obj} in {product} ?",
    )
    reworded = (
        f"What's the best way to {verb} {article} {obj} in {product}?",
        f"{product}: {verb} {obj}?",
    )
    return Topic(topic_id, "question", canonical, forms, reworded)


def general_topic(topic_id: str, text: str) -> Topic:
    bare = text.rstrip("?")
    forms = [bare.lower(), f"Please, {text[0].lower()}{text[1:]}", text.upper(), f"{text}?!"]
    if text.startswith("How do I "):
        forms.append("how to " + bare.removeprefix("How do I "))
    return Topic(topic_id, "question", text, tuple(forms), (f"Quick question: {text}",))


def keyword_topic(topic_id: str, text: str) -> Topic:
    title = text[0].upper() + text[1:]
    return Topic(topic_id, "keyword", text, (title, text.replace(" ", "  ")))


def pay_topic(topic_id: str, text: str) -> Topic:
    return Topic(topic_id, "pay", text, (text.lower().rstrip("?"),))


def followup_topic(topic_id: str, text: str) -> Topic:
    return Topic(topic_id, "followup", text)
