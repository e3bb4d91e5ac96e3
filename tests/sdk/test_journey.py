"""The rAPId Python SDK (rapid-sdk 0.1.15), used exactly as its users do, against rapid-rs."""
import pandas as pd
import pytest

from rapid import Rapid
from rapid.auth import RapidAuth
from rapid.exceptions import (DataFrameUploadValidationException, DatasetNotFoundException,
                              SubjectNotFoundException)
from rapid.items.query import Query, QueryOrderBy
from rapid.items.schema import Owner


def trips(year_offset=0):
    return pd.DataFrame({
        "region": ["north", "north", "south", "west", "south", "north"],
        "year": [2017 + year_offset, 2018, 2018, 2019, 2020, 2021],
        "price": [10.5, 20.0, 5.0, 40.0, 7.5, 30.0],
        "paid": [True, False, True, False, True, True],
        "day": pd.to_datetime(["2017-02-01", "2018-06-15", "2018-01-01", "2019-03-02", "2020-05-05", "2021-12-31"]),
    })


def test_the_whole_journey(server):
    rapid = Rapid(auth=RapidAuth())

    schema = rapid.generate_schema(trips(), "default", "journey", "trips", "PUBLIC")
    types = {c.name: (c.data_type, c.format) for c in schema.columns}
    assert types == {"region": ("string", None), "year": ("int", None), "price": ("double", None),
                     "paid": ("boolean", None), "day": ("date", "%Y-%m-%d")}
    schema.metadata.owners = [Owner(name="Journey Owner", email="owner@example.com")]
    schema.metadata.key_value_tags = {"team": "red"}
    schema.metadata.key_only_tags = ["pii"]
    rapid.create_schema(schema)

    assert rapid.upload_dataframe("default", "journey", "trips", trips()) == "Success"

    everything = rapid.download_dataframe("default", "journey", "trips")
    assert len(everything) == 6
    assert sorted(everything["region"].unique()) == ["north", "south", "west"]

    query = Query(
        select_columns=["region", "avg(price) AS mean_price", "count(*) AS trips"],
        filter="year >= 2018",
        group_by_columns=["region"],
        aggregation_conditions="count(*) >= 1",
        order_by_columns=[QueryOrderBy(column="mean_price", direction="DESC")],
        limit=2,
    )
    top = rapid.download_dataframe("default", "journey", "trips", query=query)
    assert list(top["region"]) == ["west", "north"]
    assert list(top["mean_price"]) == [40.0, 25.0]
    assert list(top["trips"]) == [1, 2]

    info = rapid.fetch_dataset_info("default", "journey", "trips")
    assert info["metadata"]["number_of_rows"] == 6
    assert info["metadata"]["tags"] == {"team": "red", "pii": ""}
    assert info["metadata"]["last_uploaded_by"] == "rapid-admin"  # the admin client's name
    day = next(c for c in info["columns"] if c["name"] == "day")
    assert day["statistics"] == {"min": "2017-02-01", "max": "2021-12-31"}

    # A new schema version with one more column, and an upload to it.
    v2 = schema.model_copy(deep=True)
    v2.columns.append(type(v2.columns[0])(name="note", partition_index=None, data_type="string", allow_null=True))
    rapid.update_schema(v2)
    with_note = trips().assign(note=["a", "b", "c", "d", "e", "f"])
    assert rapid.upload_dataframe("default", "journey", "trips", with_note) == "Success"
    latest = rapid.download_dataframe("default", "journey", "trips", version=2)
    assert "note" in latest.columns and len(latest) == 6

    # Subjects, permissions, protected domains, layers.
    client = rapid.create_client("journey_client", ["READ_PUBLIC"])
    assert client["client_name"] == "journey_client" and client["client_secret"]
    user = rapid.create_user("journey.user", "journey.user@example.com", ["READ_ALL"])
    # rAPId v7's layered names work as in rAPId.
    v7 = rapid.create_client("journey_v7_client", ["READ_DEFAULT_PUBLIC", "WRITE_ALL_PRIVATE"])
    assert v7["permissions"] == ["READ_DEFAULT_PUBLIC", "WRITE_ALL_PRIVATE"]
    rapid.delete_client(v7["client_id"])
    assert user["username"] == "journey.user"
    updated = rapid.update_subject_permissions(client["client_id"], ["READ_ALL", "WRITE_PUBLIC"])
    assert updated["permissions"] == ["READ_ALL", "WRITE_PUBLIC"]
    rapid.create_protected_domain("journeyvault")
    assert "journeyvault" in rapid.list_protected_domains()
    subjects = {s["subject_name"] for s in rapid.list_subjects()}
    assert {"journey_client", "journey.user"} <= subjects
    assert rapid.list_layers() == ["default"]
    listed = [d["dataset"] for d in rapid.list_datasets()]
    assert "trips" in listed
    rapid.delete_user("journey.user", user["user_id"])
    with pytest.raises(SubjectNotFoundException):
        rapid.delete_user("journey.user", user["user_id"])
    with pytest.raises(SubjectNotFoundException):
        rapid.delete_user("nobody.at.all", "no-such-id")
    rapid.delete_client(client["client_id"])

    rapid.delete_dataset("default", "journey", "trips")
    assert "trips" not in [d["dataset"] for d in rapid.list_datasets()]
    with pytest.raises(DatasetNotFoundException):
        rapid.delete_dataset("default", "journey", "trips")


def test_failure_paths_raise_the_sdk_exceptions(server):
    rapid = Rapid(auth=RapidAuth())
    schema = rapid.generate_schema(trips(), "default", "journey", "strict", "PUBLIC")
    schema.metadata.owners = [Owner(name="Owner", email="owner@example.com")]
    rapid.create_schema(schema)
    bad = trips().assign(year=["not a year"] * 6)
    with pytest.raises(DataFrameUploadValidationException):
        rapid.upload_dataframe("default", "journey", "strict", bad)
    with pytest.raises(DatasetNotFoundException):
        rapid.download_dataframe("default", "journey", "no_such_dataset")
    with pytest.raises(DatasetNotFoundException):
        rapid.upload_dataframe("default", "journey", "no_such_dataset", trips())
