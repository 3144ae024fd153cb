"""`lazy_property` computes on the first read and answers later reads from the instance."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from factledger.processors.lazy import lazy_property


@dataclass(frozen=True)
class Counted:
    text: str
    calls: list[str] = field(default_factory=list)

    @lazy_property
    def upper(self) -> str:
        """The text in capitals."""
        self.calls.append(self.text)
        return self.text.upper()


def test_the_first_read_computes_and_later_reads_do_not() -> None:
    item = Counted("abc")
    assert item.upper == "ABC"
    assert item.upper == "ABC"
    assert item.calls == ["abc"]
    assert item.__dict__["upper"] == "ABC"


def test_each_instance_keeps_its_own_value() -> None:
    first, second = Counted("a"), Counted("b")
    assert (first.upper, second.upper) == ("A", "B")
    assert (first.calls, second.calls) == (["a"], ["b"])


def test_read_on_the_class_it_is_the_descriptor_with_the_methods_doc() -> None:
    descriptor = Counted.upper
    assert isinstance(descriptor, lazy_property)
    assert descriptor.__doc__ == "The text in capitals."


def test_threads_reading_at_once_all_get_the_value() -> None:
    item = Counted("x" * 1_000)
    seen: list[str] = []
    start = threading.Barrier(8)

    def read() -> None:
        start.wait()
        seen.append(item.upper)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == ["X" * 1_000] * 8
    assert 1 <= len(item.calls) <= 8
