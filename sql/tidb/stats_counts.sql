SELECT
    (SELECT COUNT(*) FROM {documents}),
    (SELECT COUNT(*) FROM {chunks}),
    (SELECT COALESCE(MAX(version), 0) FROM {migrations});
