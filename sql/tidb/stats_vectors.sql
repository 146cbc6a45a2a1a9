SELECT COUNT(*) FROM {chunks} WHERE embedding IS NOT NULL;
