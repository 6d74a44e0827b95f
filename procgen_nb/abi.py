"""ABI constants of the kernel assets.

``direct_limit`` is the most storage buffers one kernel variant may bind (every buffer
binding the schema declares for the variant, ``domain_count`` and appended counters
included); a variant binding more is refused when it is loaded.
"""

direct_limit = 8
