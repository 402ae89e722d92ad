from langchain_session_recall.core.lineage import resolve_root, resolve_roots


def test_chain_resolves_to_root() -> None:
    parents = {"root": None, "child": "root", "grandchild": "child"}
    assert resolve_roots(["grandchild", "child", "root"], parents) == {
        "grandchild": "root",
        "child": "root",
        "root": "root",
    }


def test_missing_parent_stops_at_last_known_session() -> None:
    assert resolve_root("child", {"child": "deleted-parent"}) == "child"


def test_cycles_terminate_and_agree() -> None:
    parents = {"a": "b", "b": "c", "c": "a", "d": "a"}
    roots = resolve_roots(["a", "b", "c", "d"], parents)
    assert set(roots.values()) == {"a"}


def test_self_parent_is_its_own_root() -> None:
    assert resolve_root("x", {"x": "x"}) == "x"


def test_unknown_session_is_its_own_root() -> None:
    assert resolve_root("nobody", {}) == "nobody"
