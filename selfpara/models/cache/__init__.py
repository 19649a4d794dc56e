"""A cache of model calls across requests: identical deterministic calls are answered once.

One concept, used by every path that makes model calls: `ModelClient` (library, CLI,
proxy) asks its CallCache before each cacheable call (temperature 0, or seeded), and the
evaluation package's bench wraps the same CallCache around its backends. Stores: memory
(default), Redis (shared by processes and proxy replicas), SQLite (one file).

    keys        which calls may be cached, and their keys (hashes, with a fingerprint of the caller's upstream and key)
    spec        the `cache` setting: off | memory | redis://... | sqlite:///...
    stores      the CallStore protocol and the in-memory store
    redis_store the Redis store (the `redis` extra)
    sqlite_store the SQLite store
    call_cache  CallCache: lookups, hit counts, one call per key in flight, outage handling
"""

from selfpara.models.cache.call_cache import CacheStats, CallCache, open_call_cache
from selfpara.models.cache.keys import cacheable, call_key, key_material, tenant
from selfpara.models.cache.stores import CacheStoreError, CallStore, MemoryStore

__all__ = [
    "CacheStats",
    "CacheStoreError",
    "CallCache",
    "CallStore",
    "MemoryStore",
    "cacheable",
    "call_key",
    "key_material",
    "open_call_cache",
    "tenant",
]
