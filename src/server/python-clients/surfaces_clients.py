"""Drives the inference surfaces through the official Python SDKs and prints what they saw as JSON.

openai-python: chat completions, legacy completions (streamed too) and the Responses API (with
tools, streaming and previous_response_id); anthropic: the Messages API (system, tools, tool
results, streaming). Sections run as named on the command line. Environment: FLYWHEEL_ROOT_URL
(the server's root), FLYWHEEL_API_KEY, FLYWHEEL_MODEL.
"""

import json
import os
import sys

ROOT = os.environ["FLYWHEEL_ROOT_URL"]
KEY = os.environ["FLYWHEEL_API_KEY"]
MODEL = os.environ["FLYWHEEL_MODEL"]

TIME_SCHEMA = {"type": "object", "properties": {"zone": {"type": "string", "enum": ["UTC", "CET"]}}, "required": ["zone"]}


def openai_client():
    import openai

    return openai.OpenAI(base_url=f"{ROOT}/v1", api_key=KEY, max_retries=0)


def chat_section(summary):
    client = openai_client()
    completion = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Hi"}], max_tokens=4, temperature=0)
    summary["chat_finish_reason"] = completion.choices[0].finish_reason
    tools = [{"type": "function", "function": {"name": "get_time", "parameters": TIME_SCHEMA}}]
    forced = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Time?"}], max_tokens=40, extra_body=GREEDY, tools=tools, tool_choice={"type": "function", "function": {"name": "get_time"}}
    )
    summary["chat_tool_arguments"] = json.loads(forced.choices[0].message.tool_calls[0].function.arguments)


def completions_section(summary):
    import openai

    client = openai_client()
    whole = client.completions.create(model=MODEL, prompt="Once upon a time", max_tokens=5, temperature=0, logprobs=1, echo=True)
    choice = whole.choices[0]
    summary["completion_text_starts_with_prompt"] = choice.text.startswith("Once upon a time")
    summary["completion_first_token_logprob"] = choice.logprobs.token_logprobs[0]
    summary["completion_logprob_count"] = len(choice.logprobs.tokens)
    summary["completion_usage"] = whole.usage.completion_tokens
    streamed = "".join(chunk.choices[0].text for chunk in client.completions.create(model=MODEL, prompt="Once upon a time", max_tokens=5, temperature=0, stream=True) if chunk.choices)
    summary["completion_stream_matches"] = streamed == client.completions.create(model=MODEL, prompt="Once upon a time", max_tokens=5, temperature=0).choices[0].text
    batch = client.completions.create(model=MODEL, prompt=[[1, 2, 3], [4, 5]], max_tokens=2, temperature=0)
    summary["completion_batch_indexes"] = [c.index for c in batch.choices]
    try:
        client.completions.create(model=MODEL, prompt="x", suffix="y", max_tokens=2)
        summary["completion_suffix_error"] = None
    except openai.BadRequestError as error:
        summary["completion_suffix_error"] = error.body.get("message") if isinstance(error.body, dict) else str(error.body)


def responses_section(summary):
    import openai

    client = openai_client()
    first = client.responses.create(model=MODEL, input="Hello", instructions="Be brief.", max_output_tokens=5, temperature=0)
    summary["responses_status"] = first.status
    summary["responses_output_text"] = first.output_text
    second = client.responses.create(model=MODEL, previous_response_id=first.id, input="More?", max_output_tokens=5, temperature=0)
    summary["responses_chained_input_grew"] = second.usage.input_tokens > first.usage.input_tokens
    summary["responses_retrieved"] = client.responses.retrieve(second.id).id == second.id
    tools = [{"type": "function", "name": "get_time", "parameters": TIME_SCHEMA, "strict": True}]
    called = client.responses.create(model=MODEL, input="Time?", tools=tools, tool_choice={"type": "function", "name": "get_time"}, max_output_tokens=40, temperature=0)
    call = next(item for item in called.output if item.type == "function_call")
    summary["responses_call_arguments"] = json.loads(call.arguments)
    answered = client.responses.create(
        model=MODEL, previous_response_id=called.id, tools=tools, input=[{"type": "function_call_output", "call_id": call.call_id, "output": "12:00"}], max_output_tokens=4, temperature=0
    )
    summary["responses_after_call_output"] = answered.object
    with client.responses.stream(model=MODEL, input="Hello", instructions="Be brief.", max_output_tokens=5, temperature=0) as stream:
        streamed = "".join(event.delta for event in stream if event.type == "response.output_text.delta")
    summary["responses_stream_text"] = streamed
    with client.responses.stream(model=MODEL, input="Time?", tools=tools, tool_choice={"type": "function", "name": "get_time"}, max_output_tokens=40, temperature=0) as stream:
        final = stream.get_final_response()
    summary["responses_stream_call_arguments"] = json.loads(next(item for item in final.output if item.type == "function_call").arguments)
    try:
        client.responses.create(model=MODEL, previous_response_id="resp_missing", input="x")
        summary["responses_missing_previous"] = None
    except openai.NotFoundError as error:
        summary["responses_missing_previous"] = error.status_code


# The anthropic SDK no longer has sampling parameters; the server still takes them.
GREEDY = {"temperature": 0}


def messages_section(summary):
    import anthropic

    client = anthropic.Anthropic(base_url=ROOT, api_key=KEY, max_retries=0)
    message = client.messages.create(model=MODEL, max_tokens=6, system="Be brief.", extra_body=GREEDY, messages=[{"role": "user", "content": "Hello"}])
    summary["messages_stop_reason"] = message.stop_reason
    summary["messages_text"] = "".join(block.text for block in message.content if block.type == "text")
    summary["messages_output_tokens"] = message.usage.output_tokens
    with client.messages.stream(model=MODEL, max_tokens=6, system="Be brief.", extra_body=GREEDY, messages=[{"role": "user", "content": "Hello"}]) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    summary["messages_stream_text"] = streamed
    summary["messages_stream_stop_reason"] = final.stop_reason
    tools = [{"name": "get_time", "description": "The time in a zone", "input_schema": TIME_SCHEMA}]
    called = client.messages.create(model=MODEL, max_tokens=40, extra_body=GREEDY, tools=tools, tool_choice={"type": "tool", "name": "get_time"}, messages=[{"role": "user", "content": "Time?"}])
    call = next(block for block in called.content if block.type == "tool_use")
    summary["messages_tool_input"] = call.input
    with client.messages.stream(model=MODEL, max_tokens=40, extra_body=GREEDY, tools=tools, tool_choice={"type": "tool", "name": "get_time"}, messages=[{"role": "user", "content": "Time?"}]) as stream:
        streamed_call = next(block for block in stream.get_final_message().content if block.type == "tool_use")
    summary["messages_stream_tool_input"] = streamed_call.input
    answered = client.messages.create(
        model=MODEL,
        max_tokens=4,
        extra_body=GREEDY,
        tools=tools,
        messages=[
            {"role": "user", "content": "Time?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": call.id, "name": call.name, "input": call.input}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "12:00"}]},
        ],
    )
    summary["messages_after_tool_result"] = answered.type
    structured = client.messages.create(
        model=MODEL, max_tokens=40, extra_body=GREEDY, output_config={"format": {"type": "json_schema", "schema": TIME_SCHEMA}}, messages=[{"role": "user", "content": "Zone?"}]
    )
    summary["messages_structured"] = json.loads(structured.content[0].text)
    try:
        client.messages.create(model="no/such-model", max_tokens=4, messages=[{"role": "user", "content": "x"}])
        summary["messages_not_found"] = None
    except anthropic.NotFoundError as error:
        summary["messages_not_found"] = error.body["error"]["type"]
    try:
        client.messages.create(model=MODEL, max_tokens=4, extra_body={"temperature": 9}, messages=[{"role": "user", "content": "x"}])
        summary["messages_bad_request"] = None
    except anthropic.BadRequestError as error:
        summary["messages_bad_request"] = error.body["error"]["type"]


SECTIONS = {"chat": chat_section, "completions": completions_section, "responses": responses_section, "messages": messages_section}


def main():
    summary = {}
    for name in sys.argv[1:]:
        SECTIONS[name](summary)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
