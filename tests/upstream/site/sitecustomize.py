"""Loaded by the upstream test server's interpreter only (its PYTHONPATH names this
folder): upstream's model factory returns the scripted model. Nothing else of
upstream is touched: its agent, middleware, tools, sub-agents and HITL are built by
its own code around the model the factory returns. It also logs where upstream's
package was imported from: the test checks that the server runs the adopted unzip. In
the server, thread deletes go one at a time (one_delete_at_a_time.py says why)."""

import os
import sys

if os.environ.get("EVOSCIENTIST_SCRIPTED_MODEL") == "1":
    import EvoScientist.llm
    import EvoScientist.llm.models
    from scripted_model import scripted_chat_model

    # ``from .llm import get_chat_model`` finds the module attribute before the lazy
    # loader's ``__getattr__``; the fallback middleware imports it from ``.models``.
    EvoScientist.llm.get_chat_model = scripted_chat_model
    EvoScientist.llm.models.get_chat_model = scripted_chat_model
    print(f"upstream EvoScientist imported from {EvoScientist.__file__}", file=sys.stderr)

# In the server only: a CLI need not import the runtime.
serving = os.path.basename(sys.argv[0]) == "langgraph"
if serving and os.environ.get("EVOSCIENTIST_ONE_DELETE_AT_A_TIME") == "1":
    from one_delete_at_a_time import install

    install()
