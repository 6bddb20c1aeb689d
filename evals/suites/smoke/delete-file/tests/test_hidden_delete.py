from pathlib import Path


def test_the_module_is_gone():
    assert not Path("app/legacy_export.py").exists()


def test_main_still_works_without_it():
    from app import main

    assert main.run() == '[{"id": 1, "name": "ada"}, {"id": 2, "name": "grace"}]'
    assert "legacy" not in Path("app/main.py").read_text()
