"""Scenario files: TOML read into checked settings; every bad value named by its key, value and rule."""

from __future__ import annotations

import pytest

from wddmsim.core.errors import ConfigurationError
from wddmsim.core.units import GiB, KiB, MiB
from wddmsim.kmd.config import DriverModel
from wddmsim.scenarios import catalog
from wddmsim.scenarios.config import (
    ScenarioConfig,
    apply_overrides,
    describe_settings,
    from_dict,
    loads,
    parse_override,
)


def test_a_scenario_file_sets_adapter_and_workload_with_units() -> None:
    config = loads(
        """
        name = "mine"
        seed = 42
        [adapter]
        driver_model = "wddm1"
        vram = "128MiB"
        aperture = 65536
        page_table_levels = [9, 10, 10]
        policy = "fifo"
        [workload]
        processes = 5
        oversubscription = 2
        [workload.sizes]
        distribution = "uniform"
        min = "64KiB"
        max = "1MiB"
        """
    )
    assert (config.name, config.seed) == ("mine", 42)
    assert config.adapter.model == DriverModel.WDDM1 and config.adapter.vram == 128 * MiB
    assert config.adapter.aperture == 64 * KiB and config.adapter.page_table_levels == (9, 10, 10)
    assert config.workload.processes == 5 and config.workload.oversubscription == 2.0
    assert (config.workload.sizes.min, config.workload.sizes.max) == (64 * KiB, 1 * MiB)
    system = config.system_config()
    assert system.gpu.local_size == 128 * MiB and system.gpu.mmu_index_bits == (9, 10, 10)
    assert system.vidmm.eviction_policy == "fifo" and system.driver.model == DriverModel.WDDM1


def test_to_dict_reads_back_to_the_same_configuration() -> None:
    for name in catalog.BUILTIN:
        config = catalog.load(name)
        assert from_dict(config.to_dict()) == config


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"workload": {"frames": 0}}, "workload.frames=0: must lie between 1 and 100000"),
        ({"workload": {"frames": "many"}}, "workload.frames='many': must be an integer"),
        ({"workload": {"frames": True}}, "workload.frames=True: must be an integer"),
        ({"adapter": {"vram": "lots"}}, "adapter.vram='lots': must be a size such as 64KiB"),
        (
            {"adapter": {"vram": "100000"}},
            "adapter.vram='100000': must be a multiple of 64 KiB between 4 MiB and 1 TiB",
        ),
        (
            {"adapter": {"policy": "best"}},
            "adapter.policy='best': must be one of the eviction policies arc, clock, fifo, gds, lfu, lru",
        ),
        (
            {"adapter": {"driver_model": "wddm3"}},
            "adapter.driver_model='wddm3': must be wddm1 (segment model) or wddm2",
        ),
        ({"adapter": {"page_table_levels": [9]}}, "adapter.page_table_levels=[9]: must list 2 to 6 levels"),
        ({"adapter": {"paging_buffer": "32"}}, "adapter.paging_buffer=32: must be a multiple of 4096"),
        ({"adapter": {"cpu_visible": "64MiB"}}, "adapter.cpu_visible="),
        ({"workload": {"access": "zigzag"}}, "workload.access='zigzag': must be one of hot-cold, sequential"),
        ({"workload": {"textures": 1.5}}, "workload.textures=1.5: must lie between 0 and 1"),
        ({"workload": {"sizes": {"min": "2MiB", "max": "1MiB"}}}, "workload.sizes.min=2097152: must not exceed"),
        ({"workload": {"sizes": {"distribution": "zipf"}}}, "workload.sizes.distribution='zipf': must be one of"),
        ({"workload": {"cpu_visible": 0.7, "aperture": 0.5}}, "workload.aperture=0.5: workload.cpu_visible + "),
        ({"workload": {"oversubscription": 16, "processes": 1}, "adapter": {"vram": "1GiB"}}, "exceeds 2 GiB"),
        ({"adapter": {"driver_model": "wddm1"}, "workload": {"tiles": 4}}, "workload.tiles=4: tiled resources need"),
        ({"adapter": {"system_memory": "64MiB"}}, "adapter.system_memory=67108864: must hold every backing store"),
        ({"seed": -1}, "seed=-1: must be an integer between 0 and 2**63 - 1"),
        ({"workload": {"frame": 3}}, "workload.frame=3: is not a setting; known: access, aperture"),
        ({"adaptor": {}}, "adaptor={}: is not a setting; known: name, description, seed, adapter, workload"),
        ({"workload": 3}, "workload=3: must be a table"),
    ],
)
def test_bad_values_name_the_key_the_value_and_the_rule(doc: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError) as error:
        from_dict(doc)
    assert message in str(error.value)


def test_invalid_toml_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="is not valid TOML"):
        loads("[adapter\nvram = 1", name="broken.toml")


def test_overrides_are_dotted_keys_read_as_toml_or_text() -> None:
    assert parse_override("workload.frames=20") == ("workload.frames", 20)
    assert parse_override("workload.oversubscription = 2.5") == ("workload.oversubscription", 2.5)
    assert parse_override("adapter.policy=lru") == ("adapter.policy", "lru")
    assert parse_override("adapter.vram=128MiB") == ("adapter.vram", "128MiB")
    assert parse_override("adapter.page_table_levels=[9, 9]") == ("adapter.page_table_levels", [9, 9])
    with pytest.raises(ConfigurationError, match="must be KEY=VALUE"):
        parse_override("frames")
    doc = apply_overrides({"workload": {"frames": 3}}, {"workload.frames": 4, "adapter.vram": "32MiB"})
    assert doc == {"workload": {"frames": 4}, "adapter": {"vram": "32MiB"}}
    with pytest.raises(ConfigurationError, match=r"workload\.frames=3: is a value, not a table"):
        apply_overrides({"workload": {"frames": 3}}, {"workload.frames.x": 1})
    config = ScenarioConfig().with_changes({"adapter.vram": "96MiB", "seed": 9})
    assert config.adapter.vram == 96 * MiB and config.seed == 9


def test_the_catalog_loads_built_ins_and_files_and_refuses_anything_else(tmp_path: object) -> None:
    from pathlib import Path

    assert catalog.load().name == "default"
    assert catalog.load(None, {"workload.frames": 2}).workload.frames == 2
    assert {name for name, _ in catalog.describe()} == set(catalog.BUILTIN)
    assert "[workload]" in catalog.builtin_text("stress")
    path = Path(str(tmp_path)) / "small.toml"
    path.write_text('[adapter]\nvram = "32MiB"\nsystem_memory = "1GiB"\n')
    config = catalog.load(str(path))
    assert config.name == "small" and config.adapter.system_memory == 1 * GiB
    with pytest.raises(ConfigurationError, match="SCENARIO='nope': is neither a built-in scenario"):
        catalog.load("nope")


def test_every_setting_is_described() -> None:
    rows = describe_settings()
    keys = [key for key, _, _ in rows]
    assert "adapter.vram" in keys and "workload.sizes.max" in keys and "workload.tiles" in keys
    assert all(doc for _, _, doc in rows)
