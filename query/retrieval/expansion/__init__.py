"""Query expansion: 3-5 search variants of a question, the original first.

With an LLM (an OpenAI-compatible chat endpoint), the model is asked for a JSON list of
rewrites; replies are parsed tolerantly (fenced ```json blocks, an object holding the list,
prose around the JSON, a numbered or bulleted list). Anything else — no LLM, an LLM that is
down, slow or answers garbage — falls back to deterministic expansion, built from:

* identifier splitting: `NavigationStack` → "navigation stack", `fetch_all` → "fetch all"
  (embeddings of the spelled-out words match prose better than the identifier does);
* framework vocabulary: a framework named or implied by the question (by name, alias, or one
  of its API symbols) brings its central API names (`SwiftData` ↔ `@Model`, `ModelContext`,
  `ModelContainer`), so prose questions meet the code that answers them;
* pseudo-relevance feedback: the terms most shared by the top BM25 hits of the original
  question (`feedback_texts`), minus stopwords and terms the question already has.

`Expansion.method` says what ran: "llm", "llm+deterministic" (too few rewrites, topped up),
"deterministic", or "deterministic (llm failed: REASON)". A configured LLM that failed is
reported as a "degraded: " note, since something meant to run did not.
"""

from query.retrieval.expansion.expand import Expansion, expand_query

__all__ = ["Expansion", "expand_query"]
